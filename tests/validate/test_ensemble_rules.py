"""Ensemble rules of Triton 2.51 (core r24.10 ensemble_utils.cc, model_config_utils.cc, the repository manager's
dependency check): each rejected repository gives exactly its one-line error, the close accepted one none."""
from __future__ import annotations

from pathlib import Path

import pytest

from .repo_helpers import Model, outcome, python, tensor

EMPTY_VERSION = {"1/": ""}


def pipeline(ens: str = "", step0: str = "", step1: str = "model_version: -1", pre: Model | None = None,
             cls: Model | None = None,
             ens_head: str = "max_batch_size: 8\n", ens_io: str | None = None) -> dict[str, Model]:
    """RAW -> pre -> feats -> cls -> PROBS, every model batching up to 8 unless told otherwise."""
    io = ens_io if ens_io is not None else tensor("input", "RAW", "[4]") + tensor("output", "PROBS", "[3]")
    steps = (
        f'step [{{model_name: "pre" model_version: -1 input_map {{key: "IN" value: "RAW"}} '
        f'output_map {{key: "OUT" value: "feats"}} {step0}}},\n'
        f'      {{model_name: "cls" input_map {{key: "FEATURES" value: "feats"}} '
        f'output_map {{key: "PROBS" value: "PROBS"}} {step1}}}]'
    )
    return {
        "pre": pre or python(tensor("input", "IN", "[4]") + tensor("output", "OUT", "[4]")),
        "cls": cls or python(tensor("input", "FEATURES", "[4]") + tensor("output", "PROBS", "[3]")),
        "ens": (f'platform: "ensemble"\n{ens_head}{io}ensemble_scheduling {{ {steps} }}\n{ens}', EMPTY_VERSION),
    }


E = "ens/config.pbtxt: "
CASES = [
    ("step-version-not-loaded", pipeline(step1="model_version: 2"), pipeline(step1="model_version: 1"),
     E + "ensemble_scheduling.step[1].model_version: step asks for version 2 of 'cls' but Triton loads only version(s) "
     "1 of it; use model_version: -1 (the loaded version), or add the version folder / widen its version_policy"),
    ("step-version-unset-means-0", pipeline(step1=""), pipeline(),
     E + "ensemble_scheduling.step[1].model_version: step asks for version 0 of 'cls' (an unset model_version means 0) "
     "but Triton loads only version(s) 1 of it; use model_version: -1 (the loaded version), or add the version folder "
     "/ widen its version_policy"),
    ("step-version-outside-policy",
     pipeline(step1="model_version: 1",
              cls=python(tensor("input", "FEATURES", "[4]") + tensor("output", "PROBS", "[3]"),
                                                                          files={"1/model.py": "", "2/model.py": ""})),
     pipeline(step1="model_version: 2",
              cls=python(tensor("input", "FEATURES", "[4]") + tensor("output", "PROBS", "[3]"),
                         files={"1/model.py": "", "2/model.py": ""})),
     E + "ensemble_scheduling.step[1].model_version: step asks for version 1 of 'cls' but Triton loads only version(s) "
     "2 of it; use model_version: -1 (the loaded version), or add the version folder / widen its version_policy"),
    ("step-model-not-in-repository", {k: v for k, v in pipeline().items() if k != "cls"}, pipeline(),
     E + "ensemble_scheduling.step[1].model_name: model 'cls' does not exist in the repository; add it or use one of: "
         "pre"),
    ("max-batch-size-above-batching-step",
     pipeline(cls=python(tensor("input", "FEATURES", "[4]") + tensor("output", "PROBS", "[3]"),
                         head="max_batch_size: 4\n")),
     # Triton compares max_batch_size only with steps that batch: a non-batching step with the batch dim spelled out is
     # fine.
     pipeline(cls=python(tensor("input", "FEATURES", "[-1, 4]") + tensor("output", "PROBS", "[-1, 3]"),
                         head="max_batch_size: 0\n")),
     E + "max_batch_size: 8 > max_batch_size 4 of step model 'cls'; lower the ensemble's max_batch_size"),
    ("non-batching-output-feeds-batching-input",
     pipeline(pre=python(tensor("input", "IN", "[-1, 4]") + tensor("output", "OUT", "[-1, 5]"),
                         head="max_batch_size: 0\n")),
     pipeline(pre=python(tensor("input", "IN", "[-1, 4]") + tensor("output", "OUT", "[-1, 4]"),
                         head="max_batch_size: 0\n")),
     E + "ensemble_scheduling.step[1].input_map.FEATURES: tensor 'feats': input 'FEATURES' of 'cls' has dims [4] but "
     "output 'OUT' of 'pre' has dims [-1, 5], and with batch dims [-1, 4] vs [-1, 5]; make the shapes compatible (-1 "
     "matches any size)"),
    ("optimization-on-ensemble", pipeline(ens="optimization { priority: PRIORITY_MAX }\n"), pipeline(),
     E + "optimization: an ensemble cannot have optimization (Triton refuses to load it); remove optimization from the "
         "ensemble and set it on the composing models"),
    ("warmup-on-ensemble",
     pipeline(ens='model_warmup [{name: "w" batch_size: 1 inputs {key: "RAW" value: {data_type: TYPE_FP32 dims: [4] '
                  'zero_data: true}}}]\n'), pipeline(),
     E + "model_warmup: an ensemble cannot have model_warmup (Triton refuses to load it); remove model_warmup from the "
         "ensemble and set it on the composing models"),
    ("step-output-unused",
     pipeline(step1='model_version: -1 output_map {key: "EXTRA" value: "spare"}',
              cls=python(tensor("input", "FEATURES", "[4]") + 'output [{name: "PROBS" data_type: TYPE_FP32 dims: [3]}, '
                                                              '{name: "EXTRA" data_type: TYPE_FP32 dims: [1]}]\n')),
     pipeline(cls=python(tensor("input", "FEATURES", "[4]") + 'output [{name: "PROBS" data_type: TYPE_FP32 dims: [3]}, '
                                                              '{name: "EXTRA" data_type: TYPE_FP32 dims: [1]}]\n')),
     E + "ensemble_scheduling.step[1].output_map.EXTRA: tensor 'spare' is neither read by a step nor an ensemble "
     "output (Triton refuses unused ensemble tensors); remove this output_map entry or use the tensor"),
    ("ensemble-input-unused",
     pipeline(ens_io=tensor("input", "RAW", "[4]") + tensor("input", "EXTRA", "[1]")
              + tensor("output", "PROBS", "[3]")),
     pipeline(),
     E + "input[1]: ensemble input 'EXTRA' is not consumed by any step; map it in a step's input_map or remove it"),
    ("no-steps",
     {"ens": ('platform: "ensemble"\nmax_batch_size: 8\n' + tensor("input", "RAW", "[4]")
              + tensor("output", "PROBS", "[3]") + "ensemble_scheduling {}\n", EMPTY_VERSION)},
     pipeline(),
     E + "ensemble_scheduling.step: an ensemble needs at least one step; add a step with model_name, input_map and "
         "output_map"),
]


@pytest.mark.parametrize(("rejected", "accepted", "line"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_ensemble_rule(rejected: dict[str, Model], accepted: dict[str, Model], line: str, tmp_path: Path) -> None:
    errors, _ = outcome(tmp_path / "rejected", rejected)
    assert errors == [line]
    assert outcome(tmp_path / "accepted", accepted) == ([], [])


def two_decoupled_feed_one(b_reads: str) -> dict[str, Model]:
    """Decoupled a reads RAW, b reads `b_reads`, c reads both outputs: if b reads RAW, c mixes a's response stream with
    b's single response (different decoupled origins); if b reads a's output, both come from a's stream."""
    head = "max_batch_size: 0\nmodel_transaction_policy { decoupled: true }\n"
    step = (
        'step [{model_name: "a" model_version: -1 input_map {key: "IN" value: "RAW"} output_map {key: "OUT" value: '
        '"x"}}, {model_name: "b" model_version: -1 input_map {key: "IN" value: "'
        + b_reads
        + '"} output_map {key: "OUT" value: "y"}},'
        ' {model_name: "c" model_version: -1 input_map [{key: "X" value: "x"}, {key: "Y" value: "y"}] output_map {key: '
        '"OUT" value: "OUT"}}]'
    )
    io = tensor("input", "IN", "[4]") + tensor("output", "OUT", "[4]")
    return {
        "a": python(io, head),
        "b": python(io, "max_batch_size: 0\n"),
        "c": python(
            'input [{name: "X" data_type: TYPE_FP32 dims: [4]}, {name: "Y" data_type: TYPE_FP32 dims: '
            '[4]}]\n' + tensor("output", "OUT", "[4]"),
            "max_batch_size: 0\n",
        ),
        "ens": (
            'platform: "ensemble"\nmax_batch_size: 0\nmodel_transaction_policy { decoupled: true }\n'
            + tensor("input", "RAW", "[4]")
            + tensor("output", "OUT", "[4]")
            + f"ensemble_scheduling {{ {step} }}\n",
            EMPTY_VERSION,
        ),
    }


def test_step_fed_by_two_decoupled_steps_is_refused(tmp_path: Path) -> None:
    errors, _ = outcome(tmp_path / "rejected", two_decoupled_feed_one("RAW"))
    assert errors == [E + "ensemble_scheduling: step 'c' receives inputs that come from different decoupled steps "
                      "(Triton refuses to load this); feed it from one decoupled step, or make the steps non-decoupled"]
    assert outcome(tmp_path / "accepted", two_decoupled_feed_one("x")) == ([], [])


def ensemble(*steps: str) -> Model:
    """An ensemble X -> Y whose steps each call one model with input X and output Y."""
    calls = ", ".join(
        f'{{model_name: "{s}" model_version: -1 input_map {{key: "X" value: "X"}} output_map {{key: "Y" value: "Y"}}}}'
        for s in steps
    )
    return (f'platform: "ensemble"\nmax_batch_size: 0\n{tensor("input", "X", "[4]")}{tensor("output", "Y", "[4]")}'
            f"ensemble_scheduling {{ step [{calls}] }}\n", EMPTY_VERSION)


def test_ensembles_in_a_cycle_are_each_named(tmp_path: Path) -> None:
    errors, _ = outcome(tmp_path, {"a": ensemble("b"), "b": ensemble("c"), "c": ensemble("a")})
    assert errors == [f"{n}/config.pbtxt: ensemble_scheduling: ensembles call each other in a cycle: {path}; remove "
                      "one of the nested ensemble steps"
                      for n, path in (("a", "a -> b -> c -> a"), ("b", "b -> c -> a -> b"), ("c", "c -> a -> b -> c"))]


SELF = ("router/config.pbtxt: bls.calls[0]: model 'router' cannot call itself; call another model, or loop inside the "
        "model's own code")


@pytest.mark.parametrize(("calls", "before", "index"), [("pipe", [], 0), ("router,pipe", [SELF], 1)],
                         ids=["cycle", "also-calls-itself"])
def test_a_cycle_through_a_bls_model_is_named_once_at_the_bls_call(
    calls: str, before: list[str], index: int, tmp_path: Path
) -> None:
    """Not again as an ensemble cycle; and a call to itself, its own error, does not hide the cycle."""
    router = python(
        tensor("input", "X", "[4]")
        + tensor("output", "Y", "[4]")
        + f'parameters {{key: "bls_calls" value: {{string_value: "{calls}"}}}}\n',
        "max_batch_size: 0\n",
    )
    errors, _ = outcome(tmp_path, {"pipe": ensemble("router"), "router": router})
    assert errors == [
        *before,
        f"router/config.pbtxt: bls.calls[{index}]: models call each other in a cycle: router -> pipe -> "
        "router; "
        "remove one of the calls or steps in the cycle",
    ]
