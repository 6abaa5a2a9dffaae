"""Property: every single-model spec the schema accepts renders to text Triton's ModelConfig protobuf parses,
with the values that matter surviving byte for byte."""
from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

import pytest
from google.protobuf import text_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from tritonclient.grpc import model_config_pb2 as pb

from tritonkit.render.model_config import render_model_config
from tritonkit.spec.datatypes import TRITON_TYPES
from tritonkit.spec.model import ModelSpec

pytestmark = pytest.mark.slow  # hypothesis: many specs rendered and parsed: seconds

# Text that tests escaping: quotes, backslashes, newlines, tabs, other control characters, non-ASCII.
TRICKY = st.text(
    alphabet=st.one_of(
        st.sampled_from(['"', "'", "\\", "\n", "\r", "\t", "\x00", "\x07", "\x7f", "#", "{", "}", "[", "]", ":", " ",
                         "é", "名", "😀", "\u2028"]),
        st.characters(codec="utf-8", exclude_categories=("Cs",)),
    ),
    max_size=12,
)
IDENT = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True)
TENSOR_NAME = st.one_of(IDENT, TRICKY.filter(bool))
MODEL_NAME = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,20}", fullmatch=True)
DTYPE_SPELLINGS = [t for t in TRITON_TYPES] + [t[5:].lower() for t in TRITON_TYPES]
DIMS = st.lists(st.one_of(st.just(-1), st.integers(1, 4096)), max_size=4)
PARAM_VALUE = st.one_of(TRICKY, st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False, allow_infinity=False),
                        st.booleans())


def canonical(dtype: str) -> str:
    name = dtype.upper()
    return name if name.startswith("TYPE_") else "TYPE_" + name


@st.composite
def tensors(draw: st.DrawFn, kind: str) -> list[dict[str, Any]]:
    names = draw(st.lists(TENSOR_NAME, min_size=1 if kind == "input" else 0, max_size=4, unique=True))
    out = []
    for name in names:
        t: dict[str, Any] = {"name": name, "data_type": draw(st.sampled_from(DTYPE_SPELLINGS)), "dims": draw(DIMS)}
        if draw(st.booleans()):
            t["reshape"] = {"shape": draw(DIMS)}
        if draw(st.booleans()):
            t["is_shape_tensor"] = draw(st.booleans())
        if kind == "input":
            t.update(draw(st.fixed_dictionaries({}, optional={
                "format": st.sampled_from(["FORMAT_NONE", "FORMAT_NHWC", "FORMAT_NCHW"]),
                "allow_ragged_batch": st.booleans(),
                "optional": st.booleans(),
            })))
        elif draw(st.booleans()):
            t["label_filename"] = draw(TRICKY)
        out.append(t)
    return out


def queue_policy() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional={
        "timeout_action": st.sampled_from(["REJECT", "DELAY"]),
        "default_timeout_microseconds": st.integers(0, 10**9),
        "allow_timeout_override": st.booleans(),
        "max_queue_size": st.integers(0, 1000),
    })


@st.composite
def dynamic_batching(draw: st.DrawFn, max_batch: int) -> dict[str, Any]:
    d: dict[str, Any] = {
        "preferred_batch_size": draw(st.lists(st.integers(1, max(1, max_batch)), max_size=3, unique=True)),
        "max_queue_delay_microseconds": draw(st.integers(0, 10**6)),
        "preserve_ordering": draw(st.booleans()),
    }
    if draw(st.booleans()):
        levels = draw(st.integers(1, 5))
        d["priority_levels"] = levels
        d["default_priority_level"] = draw(st.integers(1, levels))
        d["priority_queue_policy"] = draw(st.dictionaries(st.integers(1, levels), queue_policy(), max_size=2))
    if draw(st.booleans()):
        d["default_queue_policy"] = draw(queue_policy())
    return d


@st.composite
def control(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    c: dict[str, Any] = {"kind": kind}
    if kind == "CONTROL_SEQUENCE_CORRID":
        if draw(st.booleans()):
            c["data_type"] = draw(
                st.sampled_from(["TYPE_UINT64", "TYPE_INT64", "TYPE_UINT32", "TYPE_INT32", "TYPE_STRING"])
            )
        return c
    pick = draw(st.sampled_from(["default", "int32", "fp32", "bool"]))
    if pick == "int32":
        c["int32_false_true"] = draw(st.lists(st.integers(-(2**31), 2**31 - 1), min_size=2, max_size=2))
    elif pick == "fp32":
        c["fp32_false_true"] = draw(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=2,
                                             max_size=2))
    elif pick == "bool":
        c["bool_false_true"] = [False, True]
    return c


@st.composite
def sequence_batching(draw: st.DrawFn, max_batch: int) -> dict[str, Any]:
    kinds = draw(st.lists(st.sampled_from(["CONTROL_SEQUENCE_START", "CONTROL_SEQUENCE_READY", "CONTROL_SEQUENCE_END",
                                           "CONTROL_SEQUENCE_CORRID"]), unique=True))
    s: dict[str, Any] = {
        "control_input": [{"name": f"{k[17:]}_{i}", "control": [draw(control(k))]} for i, k in enumerate(kinds)],
        "iterative_sequence": draw(st.booleans()),
    }
    if draw(st.booleans()):
        s["max_sequence_idle_microseconds"] = draw(st.integers(0, 10**8))
    states = []
    for k in range(draw(st.integers(0, 2))):
        dtype = draw(st.sampled_from(DTYPE_SPELLINGS))
        dims = draw(DIMS)
        state: dict[str, Any] = {"input_name": f"INPUT_STATE_{k}", "output_name": f"OUTPUT_STATE_{k}",
                                 "data_type": dtype, "dims": dims}
        if draw(st.booleans()):
            init: dict[str, Any] = {"name": draw(TRICKY.filter(bool)), "data_type": dtype,
                                    "dims": [abs(d) for d in dims]}
            init.update({"zero_data": True} if draw(st.booleans()) else {"data_file": draw(IDENT) + ".bin"})
            state["initial_state"] = [init]
        state.update(
            draw(
                st.fixed_dictionaries(
                    {},
                    optional={"use_same_buffer_for_input_output": st.booleans(), "use_growable_memory": st.booleans()},
                )
            )
        )
        states.append(state)
    s["state"] = states
    strategy = draw(st.sampled_from(["none", "direct", "oldest"]))
    if strategy == "direct":
        s["direct"] = {"max_queue_delay_microseconds": draw(st.integers(0, 10**6)),
                       "minimum_slot_utilization": draw(st.floats(0.0, 1.0))}
    elif strategy == "oldest":
        s["oldest"] = {
            "max_candidate_sequences": draw(st.integers(1, 64)),
            "preferred_batch_size": draw(st.lists(st.integers(1, max(1, max_batch)), max_size=3, unique=True))
            if max_batch
            else [],
            "max_queue_delay_microseconds": draw(st.integers(0, 10**6)),
            "preserve_ordering": draw(st.booleans()),
        }
    return s


@st.composite
def warmups(draw: st.DrawFn, inputs: list[dict[str, Any]], max_batch: int) -> list[dict[str, Any]]:
    out = []
    for _ in range(draw(st.integers(0, 2))):
        data = {}
        for t in inputs:
            w: dict[str, Any] = {"data_type": t["data_type"],
                                 "dims": [d if d > 0 else draw(st.integers(1, 8)) for d in t["dims"]]}
            source = draw(st.sampled_from(["zero_data", "random_data", "input_data_file"]))
            w[source] = f"data/{draw(IDENT)}.bin" if source == "input_data_file" else True
            data[t["name"]] = w
        out.append({"name": draw(TRICKY.filter(bool)), "batch_size": draw(st.integers(1, max(1, max_batch))),
                    "inputs": data, "count": draw(st.integers(1, 3))})
    return out


def accelerator() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"name": st.sampled_from(["tensorrt", "openvino", "cuda", "auto_mixed_precision"]),
                                  "parameters": st.dictionaries(TRICKY, PARAM_VALUE, max_size=3)})


def optimization() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional={
        "priority": st.sampled_from(["PRIORITY_DEFAULT", "PRIORITY_MAX", "PRIORITY_MIN"]),
        "cuda": st.fixed_dictionaries({},
                                      optional={"graphs": st.booleans(), "busy_wait_events": st.booleans(),
                                                "output_copy_stream": st.booleans()}),
        "execution_accelerators": st.fixed_dictionaries({}, optional={
            "gpu_execution_accelerator": st.lists(accelerator(), max_size=2),
            "cpu_execution_accelerator": st.lists(accelerator(), max_size=2),
        }),
        "input_pinned_memory": st.fixed_dictionaries({"enable": st.booleans()}),
        "output_pinned_memory": st.fixed_dictionaries({"enable": st.booleans()}),
        "gather_kernel_buffer_threshold": st.integers(0, 2**32 - 1),
        "eager_batching": st.booleans(),
    })


def instance_group() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "name": TRICKY,
            "kind": st.sampled_from(["KIND_AUTO", "KIND_GPU", "KIND_CPU", "KIND_MODEL"]),
            "count": st.integers(1, 16),
            "gpus": st.lists(st.integers(0, 7), max_size=3),
            "rate_limiter": st.fixed_dictionaries(
                {},
                optional={
                    "resources": st.lists(
                        st.fixed_dictionaries(
                            {"name": TRICKY.filter(bool), "count": st.integers(0, 100)},
                            optional={"global": st.booleans()},
                        ),
                        max_size=2,
                    ),
                    "priority": st.integers(0, 10),
                },
            ),
            "passive": st.booleans(),
            "host_policy": IDENT,
        },
    )


VERSION_POLICY = st.one_of(
    st.builds(lambda n: {"latest": {"num_versions": n}}, st.integers(1, 5)),
    st.just({"all": {}}),
    st.builds(lambda v: {"specific": {"versions": v}},
              st.lists(st.integers(1, 100), min_size=1, max_size=3, unique=True)),
)


@st.composite
def model_specs(draw: st.DrawFn) -> dict[str, Any]:
    max_batch = draw(st.sampled_from([0, 0, 1, 4, 8, 64]))
    inputs = draw(tensors("input"))
    spec: dict[str, Any] = {
        draw(st.sampled_from(["backend", "platform"])): draw(
            st.sampled_from(["python", "onnxruntime", "tensorrt", "pytorch", "onnxruntime_onnx"])
        ),
        "max_batch_size": max_batch,
        "input": inputs,
        "output": draw(tensors("output")),
    }
    scheduler = draw(st.sampled_from(["none", "dynamic", "sequence"]))
    if scheduler == "dynamic" and max_batch:
        spec["dynamic_batching"] = draw(dynamic_batching(max_batch))
    elif scheduler == "sequence":
        spec["sequence_batching"] = draw(sequence_batching(max_batch))
    optional = draw(st.fixed_dictionaries({}, optional={
        "runtime": IDENT,
        "default_model_filename": TRICKY.filter(bool),
        "version_policy": VERSION_POLICY,
        "instance_group": st.lists(instance_group(), max_size=2),
        "model_transaction_policy": st.fixed_dictionaries({"decoupled": st.booleans()}),
        "response_cache": st.fixed_dictionaries({"enable": st.booleans()}),
        "parameters": st.dictionaries(TRICKY, PARAM_VALUE, max_size=4),
        "optimization": optimization(),
        "model_warmup": warmups(inputs, max_batch),
        "batch_input": st.lists(st.fixed_dictionaries({
            "kind": st.sampled_from(["BATCH_ELEMENT_COUNT", "BATCH_ACCUMULATED_ELEMENT_COUNT",
                                     "BATCH_MAX_ELEMENT_COUNT_AS_SHAPE", "BATCH_ITEM_SHAPE_FLATTEN"]),
            "target_name": st.lists(TENSOR_NAME, min_size=1, max_size=2),
            "data_type": st.sampled_from(["TYPE_INT32", "TYPE_FP32"]),
            "source_input": st.lists(TENSOR_NAME, max_size=2),
        }), max_size=2),
        "batch_output": st.lists(st.fixed_dictionaries({
            "target_name": st.lists(TENSOR_NAME, min_size=1, max_size=2),
            "source_input": st.lists(TENSOR_NAME, min_size=1, max_size=2),
        }), max_size=1),
    }))
    spec.update(optional)
    return spec


def as_parameter_string(value: Any) -> str:
    """What a spec scalar must become in a Triton string parameter."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(name=MODEL_NAME, data=model_specs())
def test_accepted_specs_render_to_parseable_configs(name: str, data: dict[str, Any]) -> None:
    try:
        spec = ModelSpec.model_validate(data)
    except ValidationError as exc:  # the strategy aims at valid specs; say which rule it broke
        raise AssertionError(f"strategy produced a spec the schema refuses: {exc}") from None
    text = render_model_config(name, spec, "tritonkit.yaml")
    config = text_format.Parse(text, pb.ModelConfig())

    assert config.name == name
    assert config.max_batch_size == data["max_batch_size"]
    assert [t.name for t in config.input] == [t["name"] for t in data["input"]]
    assert [list(t.dims) for t in config.input] == [t["dims"] for t in data["input"]]
    assert [pb.DataType.Name(t.data_type) for t in config.input] == [canonical(t["data_type"]) for t in data["input"]]
    assert [t.name for t in config.output] == [t["name"] for t in data["output"]]
    assert [pb.DataType.Name(t.data_type) for t in config.output] == [canonical(t["data_type"]) for t in data["output"]]
    # a label file is copied into the model folder under its own name
    assert [t.label_filename for t in config.output] == [
        PurePosixPath(t.get("label_filename", "")).name for t in data["output"]
    ]
    if "dynamic_batching" in data:
        d = data["dynamic_batching"]
        assert list(config.dynamic_batching.preferred_batch_size) == d["preferred_batch_size"]
        assert config.dynamic_batching.default_priority_level == d.get("default_priority_level", 0)
    if "sequence_batching" in data:
        s = data["sequence_batching"]
        assert [c.name for c in config.sequence_batching.control_input] == [c["name"] for c in s["control_input"]]
        assert [(st_.input_name, st_.output_name) for st_ in config.sequence_batching.state] == [
            (x["input_name"], x["output_name"]) for x in s["state"]
        ]
        assert [[i.name for i in st_.initial_state] for st_ in config.sequence_batching.state] == [
            [i["name"] for i in x.get("initial_state", [])] for x in s["state"]
        ]
        if "oldest" in s:
            assert list(config.sequence_batching.oldest.preferred_batch_size) == s["oldest"]["preferred_batch_size"]
    assert {k: v.string_value for k, v in config.parameters.items()} == {
        k: as_parameter_string(v) for k, v in data.get("parameters", {}).items()
    }
    assert [w.name for w in config.model_warmup] == [w["name"] for w in data.get("model_warmup", [])]
    assert [sorted(w.inputs) for w in config.model_warmup] == [
        sorted(w["inputs"]) for w in data.get("model_warmup", [])
    ]
    assert [g.name for g in config.instance_group] == [g.get("name", "") for g in data.get("instance_group", [])]
    if "default_model_filename" in data:
        assert config.default_model_filename == data["default_model_filename"]
    accelerators = data.get("optimization", {}).get("execution_accelerators", {})
    for field in ("gpu_execution_accelerator", "cpu_execution_accelerator"):
        got = [dict(a.parameters) for a in getattr(config.optimization.execution_accelerators, field)]
        assert got == [
            {k: as_parameter_string(v) for k, v in a["parameters"].items()} for a in accelerators.get(field, [])
        ]
    if "model_transaction_policy" in data:
        assert config.model_transaction_policy.decoupled is data["model_transaction_policy"]["decoupled"]
    if "response_cache" in data:
        assert config.response_cache.enable is data["response_cache"]["enable"]
