"""platform/backend pairs as Triton fills and checks them, names `model.<backend>`, and `runtime`."""
from __future__ import annotations

import pytest

from .rule_helpers import IO, Rule, assert_rule, lines, model

PLATFORM_FIX = "set backend (e.g. python, onnxruntime) or platform"


def head(fields: str) -> str:
    return model(head=fields + "\nmax_batch_size: 8\n")


RULES = [
    Rule("known-backend-wrong-platform", head('platform: "tensorrt_plan"\nbackend: "onnxruntime"'),
         "platform: platform 'tensorrt_plan' does not go with backend 'onnxruntime'; fix: use platform "
         "onnxruntime_onnx",
         head('platform: "tensorrt_plan"\nbackend: "tensorrt"')),
    Rule("tensorflow-without-platform", head('backend: "tensorflow"\ndefault_model_filename: "model.bin"'),
         "platform: backend 'tensorflow' needs a platform and default_model_filename 'model.bin' implies none; fix: "
         "use platform tensorflow_graphdef or tensorflow_savedmodel",
         head('backend: "tensorflow"\ndefault_model_filename: "model.savedmodel"')),
    Rule("unknown-platform", head('platform: "tensorflo"\ndefault_model_filename: "model.savedmodel"'),
         "platform: unknown platform 'tensorflo' without a backend (Triton knows tensorflow_graphdef, "
         "tensorflow_savedmodel, tensorrt_plan, onnxruntime_onnx, pytorch_libtorch, ensemble); fix: set backend, or "
         "use a known platform",
         head('platform: "onnxruntime_onnx"')),
    Rule("unknown-model-file", head('default_model_filename: "model.bin"'),
         "default_model_filename: neither platform nor backend is set and 'model.bin' names no backend Triton knows; "
         f"fix: {PLATFORM_FIX}",
         head('default_model_filename: "model.onnx"')),
    Rule("runtime-escapes", head('backend: "identity"\nruntime: "../dummy_runtime/libtriton_identity.so"'),
         "runtime: '../dummy_runtime/libtriton_identity.so' escapes the backend folder, which Triton refuses; fix: "
         "name a library inside the backend folder (e.g. libtriton_<backend>.so) or leave runtime unset",
         head('backend: "identity"\nruntime: "lib/../libtriton_identity.so"')),
    Rule("python-model-file-not-py", head('backend: "python"\ndefault_model_filename: "model.python"'),
         "default_model_filename: 'model.python' is not a .py file, which the Python backend refuses; fix: name the "
         "Python model file <name>.py (the default is model.py)",
         head('backend: "python"\ndefault_model_filename: "classify.py"')),
    Rule("no-backend-no-platform", head(""),
         "backend: neither platform nor backend is set: Triton takes the backend from the model file in the version "
         "folder (model.onnx, model.py, ...) and fails without one; fix: set backend (e.g. python, onnxruntime) or "
         "platform (e.g. ensemble)",
         head('backend: "python"'), "warning"),
]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_backend_rule(rule: Rule) -> None:
    assert_rule(rule)


def test_ensemble_with_backend() -> None:
    steps = ('ensemble_scheduling {step [{model_name: "a" model_version: -1 input_map {key: "IN" value: "IN"} '
             'output_map {key: "OUT" value: "OUT"}}]}\n')
    rejected = 'platform: "ensemble"\nbackend: "python"\nmax_batch_size: 8\n' + IO + steps
    assert lines(rejected, "error") == ["backend: an ensemble must have an empty backend, got 'python'; fix: remove "
                                        "backend (platform: ensemble runs the steps itself)"]
    assert lines('platform: "ensemble"\nmax_batch_size: 8\n' + IO + steps, "error") == []


@pytest.mark.parametrize("text", [
    'backend: "python"\nplatform: "onnxruntime_onnx"',  # Triton checks the pair only for backends it knows
    'backend: "python"\nruntime: "model.py"',
    'backend: "onnxruntime"',  # Triton fills platform onnxruntime_onnx
])
def test_accepted_pairs(text: str) -> None:
    assert lines(head(text), "error") == [] and lines(head(text), "warning") == []


def test_backend_from_model_name() -> None:
    """Triton takes backend 'identity' from a model named 'm.identity', even with auto-complete disabled."""
    assert lines(head(""), "warning", name="m.identity") == [] and lines(head(""), "error", name="m.identity") == []
