"""Files a config names, as Triton 2.51 reads them at load: label files (core Model::Init reads each one from the
model folder and refuses the model without it), the cc_model_filenames files, and a TorchScript model against its
config as the pytorch backend r24.10 checks them (libtorch.cc). Each refusal is its one line; its twin passes."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from .repo_helpers import GRAPH, Model, outcome, python, tensor

M = "m/config.pbtxt: "
LABELLED = 'output [{name: "OUT" data_type: TYPE_FP32 dims: [4] label_filename: "labels.txt"}]\n'


def labelled(files: dict[str, str | bytes]) -> dict[str, Model]:
    return {"m": python(tensor("input", "IN", "[4]") + LABELLED, files={"1/model.py": "", **files})}


class Two(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x + y, x - y


def torchscript() -> bytes:
    """A real TorchScript file whose forward takes (x, y) and returns two tensors."""
    import io

    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(Two()), buffer)
    return buffer.getvalue()


TS = torchscript()


def torch_model(inputs: tuple[str, ...], outputs: tuple[str, ...] = ("OUTPUT__0", "OUTPUT__1"),
                extra: str = "") -> dict[str, Model]:
    io = "".join(tensor("input", n, "[4]") for n in inputs) + "".join(tensor("output", n, "[4]") for n in outputs)
    return {"m": (f'platform: "pytorch_libtorch"\nmax_batch_size: 8\n{io}{extra}', {"1/model.pt": TS})}


STATE = ('sequence_batching { state [{input_name: "STATE__2" output_name: "%s" data_type: TYPE_FP32 dims: [4] '
         'initial_state {data_type: TYPE_FP32 dims: [4] zero_data: true name: "z"}}] }\n')
CASES = [
    ("label-file-missing", labelled({}), labelled({"labels.txt": "cat\ndog\n"}),
     M + "output[0].label_filename: 'labels.txt' is not a file in the model folder, so Triton refuses to load 'm'; put "
         "the label file in m/labels.txt, or remove label_filename"),
    # Triton reads the label file from the model folder, not from a version folder
    ("label-file-in-the-version-folder", labelled({"1/labels.txt": "cat\n"}), labelled({"labels.txt": "cat\n"}),
     M + "output[0].label_filename: 'labels.txt' is not a file in the model folder, so Triton refuses to load 'm'; put "
         "the label file in m/labels.txt, or remove label_filename"),
    ("cc-model-filename-missing",
     {"m": ('backend: "onnxruntime"\nmax_batch_size: 8\ncc_model_filenames { key: "8.0" value: "a100.onnx" '
            '}\n' + tensor("input", "IN", "[4]") + tensor("output", "OUT", "[4]"),
            {"1/model.onnx": GRAPH})},
     {"m": ('backend: "onnxruntime"\nmax_batch_size: 8\ncc_model_filenames { key: "8.0" value: "a100.onnx" '
            '}\n' + tensor("input", "IN", "[4]") + tensor("output", "OUT", "[4]"),
            {"1/model.onnx": GRAPH, "1/a100.onnx": GRAPH})},
     M + "cc_model_filenames.8.0: version 1 has no a100.onnx, which the onnxruntime backend loads on GPUs of compute "
         "capability 8.0; put the model file in m/1/a100.onnx"),
    ("torchscript-forward-takes-other-inputs", torch_model(("INPUT__0",)), torch_model(("INPUT__0", "INPUT__1")),
     M + "input: forward() of 1/model.pt takes 2 inputs (x, y) but the config declares 1; declare one input per "
         "forward argument (inputs, batch inputs, sequence controls and states together)"),
    ("torchscript-state-needs-indexed-inputs", torch_model(("x",), extra=STATE % "STATE__2"),
     torch_model(("INPUT__0",), extra=STATE % "STATE__2"),
     M + "input: the pytorch backend needs every input named <name>__<index> (and no input named after a forward() "
         "argument) when the model keeps sequence state; name them INPUT__0, INPUT__1, ..."),
    ("torchscript-state-name", torch_model(("INPUT__0",), extra=STATE % "next_state"),
     torch_model(("INPUT__0",), extra=STATE % "STATE__2"),
     M + "sequence_batching.state[0].output_name: the pytorch backend needs state 'next_state' named <name>__<index>; "
         "name it <name>__<index>, e.g. INPUT__0"),
    ("torchscript-unsupported-type",
     {"m": ('platform: "pytorch_libtorch"\nmax_batch_size: 8\n' + tensor("input", "INPUT__0", "[4]", "TYPE_UINT32")
                                            + tensor("input", "INPUT__1", "[4]") + tensor("output", "OUTPUT__0", "[4]"),
            {"1/model.pt": TS})},
     torch_model(("INPUT__0", "INPUT__1"), ("OUTPUT__0",)),
     M + "input[0].data_type: TYPE_UINT32 (input 'INPUT__0') is not a type the pytorch backend serves; use one of "
         "TYPE_BOOL, TYPE_FP16, TYPE_FP32, TYPE_FP64, TYPE_INT16, TYPE_INT32, TYPE_INT64, TYPE_INT8, TYPE_STRING, "
         "TYPE_UINT8"),
    ("torchscript-file-is-no-model", {"m": (torch_model(("x", "y"))["m"][0], {"1/model.pt": b"not an archive"})},
     torch_model(("x", "y")), None),
]


@pytest.mark.parametrize(("rejected", "accepted", "line"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_model_file_rule(rejected: dict[str, Model], accepted: dict[str, Model], line: str | None,
                         tmp_path: Path) -> None:
    errors, _ = outcome(tmp_path / "rejected", rejected)
    if line is None:  # the library's own reason is quoted: check the frame of the line
        assert len(errors) == 1 and errors[0].startswith(M + "default_model_filename: 1/model.pt is not a TorchScript "
                                                             "model the pytorch backend can load ("), errors
    else:
        assert errors == [line]
    assert outcome(tmp_path / "accepted", accepted) == ([], [])


@pytest.mark.parametrize("inputs", [("x", "y"), ("INPUT__0", "INPUT__1")],
                         ids=["forward-argument-names", "indexed-names"])
def test_torchscript_input_naming_conventions_pass(inputs: tuple[str, ...], tmp_path: Path) -> None:
    assert outcome(tmp_path, torch_model(inputs)) == ([], [])


def test_torchscript_names_outside_both_conventions_are_a_warning(tmp_path: Path) -> None:
    """The backend falls back to config order and loads the model; validate passes and says so."""
    errors, warnings = outcome(tmp_path, torch_model(("first", "second"), ("sum", "difference")))
    assert errors == []
    assert warnings == [
        M + "output: output names ['sum', 'difference'] are not all <name>__<index>, so the pytorch backend maps them "
            "to forward()'s results in config order; name them OUTPUT__0, OUTPUT__1, ... (the index of each result)",
        M + "input: input names ['first', 'second'] are neither forward()'s arguments (x, y) nor <name>__<index>, so "
            "the pytorch backend passes them in config order; name them x, y or INPUT__0, INPUT__1, ...",
    ]


def test_cc_model_filenames_may_stand_in_for_the_default_file_on_gpus_only(tmp_path: Path) -> None:
    """Without the default file a KIND_GPU-only model loads on the listed GPUs: a warning, not an error."""
    config = ('backend: "onnxruntime"\nmax_batch_size: 8\ncc_model_filenames { key: "8.0" value: "a100.onnx" '
              '}\n' + tensor("input", "IN", "[4]")
              + tensor("output", "OUT", "[4]"))
    assert outcome(tmp_path / "gpu",
                   {"m": (config + "instance_group [{kind: KIND_GPU}]\n", {"1/a100.onnx": GRAPH})}) == ([], [])
    errors, warnings = outcome(tmp_path / "cpu",
                               {"m": (config + "instance_group [{kind: KIND_CPU}]\n", {"1/a100.onnx": GRAPH})})
    assert errors == [] and warnings == [
        M + "default_model_filename: version 1 has no model.onnx, which the onnxruntime backend loads on CPUs and on "
            "GPUs that cc_model_filenames does not list; put the model file in m/1/model.onnx, or use KIND_GPU "
            "instance groups only"]
