"""`tritonkit build` on bad specs: exit 2, one located `file: field: problem; fix` line each, nothing written.

Every case starts from a project that built cleanly (so `model_repository/` and `docker-compose.yml`
exist), breaks one thing, and checks the failed build left every path and byte as it was. Most cases run
the real CLI in-process (click's runner); `test_process_level` reruns a sample as `python -m tritonkit`.
"""
from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.cli_contract import assert_one_line_errors, run_in_process, run_subprocess, snapshot

PYTHON_MODEL = ('"""Stub Python model for the bad-input tests."""\n\n\nclass TritonPythonModel:\n    def execute(self, '
                'requests):\n        return []\n')


def fp32(name: str, dims: list[int]) -> dict[str, Any]:
    return {"name": name, "data_type": "TYPE_FP32", "dims": dims}


def good_top() -> dict[str, Any]:
    """tritonkit.yaml of the good project: a batching model with warmup and a stateful sequence model."""
    return {
        "version": 1,
        "include": ["ensembles/pipe.yaml"],
        "models": {
            "encoder": {
                "backend": "python",
                "max_batch_size": 32,
                "input": [fp32("TEXT", [16])],
                "output": [fp32("EMBEDDING", [8])],
                "dynamic_batching": {"preferred_batch_size": [8, 16], "max_queue_delay_microseconds": 100},
                "instance_group": [{"kind": "KIND_CPU", "count": 1}],
                "model_warmup": [
                    {"name": "zeros", "batch_size": 1,
                     "inputs": {"TEXT": {"data_type": "TYPE_FP32", "dims": [16], "zero_data": True}}}
                ],
                "files": {"model.py": "models/encoder.py"},
            },
            "counter": {
                "backend": "python",
                "max_batch_size": 4,
                "input": [{"name": "VALUE", "data_type": "TYPE_INT32", "dims": [1]}],
                "output": [{"name": "TOTAL", "data_type": "TYPE_INT32", "dims": [1]}],
                "sequence_batching": {
                    "control_input": [
                        {"name": "START", "control": [{"kind": "CONTROL_SEQUENCE_START"}]},
                        {"name": "CORRID", "control": [{"kind": "CONTROL_SEQUENCE_CORRID"}]},
                    ],
                    "state": [
                        {
                            "input_name": "STATE_IN", "output_name": "STATE_OUT", "data_type": "TYPE_INT32",
                            "dims": [1],
                            "initial_state": [{"name": "zero", "data_type": "TYPE_INT32", "dims": [1],
                                               "zero_data": True}],
                        }
                    ],
                    "direct": {},
                },
                "files": {"model.py": "models/counter.py"},
            },
        },
    }


def good_pipe() -> dict[str, Any]:
    """ensembles/pipe.yaml of the good project: pre -> cls wired as the ensemble `pipe`."""
    return {
        "description": "preprocess -> classifier",
        "models": {
            "pre": {"backend": "python", "max_batch_size": 16, "input": [fp32("RAW", [4])],
                    "output": [fp32("FEATURES", [4])], "files": {"model.py": "../models/pre.py"}},
            "cls": {"backend": "python", "max_batch_size": 16, "input": [fp32("FEATURES", [4])],
                    "output": [fp32("PROBS", [3])], "files": {"model.py": "../models/cls.py"}},
            "pipe": {
                "platform": "ensemble",
                "max_batch_size": 16,
                "input": [fp32("RAW", [4])],
                "output": [fp32("PROBS", [3])],
                "ensemble_scheduling": {"step": [
                    {"model_name": "pre", "input_map": {"RAW": "RAW"}, "output_map": {"FEATURES": "feats"}},
                    {"model_name": "cls", "input_map": {"FEATURES": "feats"}, "output_map": {"PROBS": "PROBS"}},
                ]},
            },
        },
    }


@dataclass
class Project:
    """The two spec files as data, to be broken by one case and written back."""

    root: Path
    top: dict[str, Any] = field(default_factory=good_top)
    pipe: dict[str, Any] = field(default_factory=good_pipe)
    raw: dict[str, str] = field(default_factory=dict)  # file -> text written verbatim instead of the data

    def model(self, name: str) -> dict[str, Any]:
        return self.top["models"].get(name) or self.pipe["models"][name]

    def step(self, index: int) -> dict[str, Any]:
        return self.pipe["models"]["pipe"]["ensemble_scheduling"]["step"][index]

    def save(self) -> None:
        (self.root / "models").mkdir(exist_ok=True)
        (self.root / "ensembles").mkdir(exist_ok=True)
        for name in ("encoder", "counter", "pre", "cls"):
            (self.root / "models" / f"{name}.py").write_text(PYTHON_MODEL, encoding="utf-8")
        texts = {
            "tritonkit.yaml": yaml.safe_dump(self.top, sort_keys=False),
            "ensembles/pipe.yaml": yaml.safe_dump(self.pipe, sort_keys=False),
            **self.raw,
        }
        for rel, text in texts.items():
            (self.root / rel).write_text(text, encoding="utf-8")


@dataclass
class Case:
    id: str
    breaks: Callable[[Project], None]
    first: str  # the first stderr line starts with this (file: field: ...)
    contains: tuple[str, ...] = ()  # substrings of the first line
    exact: str | None = None  # the whole first line, where it is pinned


def rename_model(p: Project, old: str, new: Any) -> None:
    p.top["models"] = {(new if k == old else k): v for k, v in p.top["models"].items()}


def set_state(p: Project, states: list[tuple[str, str]]) -> None:
    p.model("counter")["sequence_batching"]["state"] = [
        {"input_name": i, "output_name": o, "data_type": "TYPE_INT32", "dims": [1]} for i, o in states
    ]


def warmup_input(p: Project) -> dict[str, Any]:
    return p.model("encoder")["model_warmup"][0]["inputs"]["TEXT"]


def dyn(p: Project) -> dict[str, Any]:
    return p.model("encoder")["dynamic_batching"]


def seq(p: Project) -> dict[str, Any]:
    return p.model("counter")["sequence_batching"]


def add_outer_ensemble_calling_pipe(p: Project) -> None:
    p.pipe["models"]["outer"] = {
        "platform": "ensemble", "max_batch_size": 16, "input": [fp32("RAW", [4])], "output": [fp32("PROBS", [3])],
        "ensemble_scheduling": {"step": [{"model_name": "pipe", "input_map": {"RAW": "RAW"},
                                          "output_map": {"PROBS": "PROBS"}}]},
    }
    p.pipe["models"]["pipe"]["ensemble_scheduling"]["step"][1] = {
        "model_name": "outer",
        "input_map": {"RAW": "feats"},
        "output_map": {"PROBS": "PROBS"},
    }


def tensor_cycle(p: Project) -> None:
    # step 0 needs 'loop_b', which step 1 makes from 'loop_a', which only step 0 makes.
    p.pipe["models"]["pipe"]["ensemble_scheduling"]["step"] = [
        {"model_name": "pre", "input_map": {"RAW": "loop_b"}, "output_map": {"FEATURES": "loop_a"}},
        {"model_name": "pre", "input_map": {"RAW": "loop_a"}, "output_map": {"FEATURES": "loop_b"}},
        {"model_name": "cls", "input_map": {"FEATURES": "RAW"}, "output_map": {"PROBS": "PROBS"}},
    ]


def smoke_with_dims(p: Project, dims: list[int]) -> None:
    """A known-answer case for the encoder, whose TEXT dims are then broken: no value can fit them, so the
    dims are the cause to name first (the case's shape is not blamed before them)."""
    p.model("encoder")["smoke"] = [{"inputs": {"TEXT": [[0.0] * 16]}}]
    p.model("encoder")["input"][0]["dims"] = dims


def outside(p: Project, name: str = "outside.py") -> str:
    """A real file just outside the project folder; returns the spec path that reaches it (`../name`)."""
    (p.root.parent / name).write_text(PYTHON_MODEL, encoding="utf-8")
    return f"../{name}"


def symlink_out(p: Project, rel: str, target: str = "/etc/passwd") -> str:
    """A symlink inside the project that leads outside it; returns `rel`."""
    link = p.root / rel
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    return rel


def folder_with_symlink_out(p: Project) -> None:
    """A folder source (copied whole) that is inside the project but holds a symlink to /etc/passwd."""
    symlink_out(p, "models/lib/secret")
    (p.root / "models" / "lib" / "helpers.py").write_text(PYTHON_MODEL, encoding="utf-8")
    p.model("encoder")["files"]["lib"] = "models/lib"


def add_exported_model(p: Project, name: str) -> None:
    """A model with a source: if its export ran, `.tritonkit/` would appear in the project."""
    p.top["models"][name] = {"max_batch_size": 4, "source": {"python": "models.encoder:build"}}


def include_latin1(p: Project) -> None:
    """An included file saved as Latin-1: the 'è' of 'modèle' is the single byte 0xe8, not UTF-8."""
    (p.root / "ensembles" / "latin1.yaml").write_bytes("# ok\nmodels: {mod\xe8le: {}}\n".encode("latin-1"))
    p.top["include"].append("ensembles/latin1.yaml")


OUT = "outside the project folder"

T = "tritonkit.yaml: "
P = "ensembles/pipe.yaml: "
E = T + "models.encoder."
C = T + "models.counter."
PIPE = P + "models.pipe."

CASES = [
    # --- YAML itself
    Case("yaml-unclosed-flow-list", lambda p: p.raw.update({"tritonkit.yaml": "models:\n  encoder: [\n"}),
         T + "line 3, column 1: ", ("invalid YAML",)),
    Case("yaml-tab-indent", lambda p: p.raw.update({"tritonkit.yaml": "models:\n\tencoder: {}\n"}),
         T + "line 2, column 1: ", ("invalid YAML", "'\\t'")),
    Case("yaml-duplicate-model-key",
         lambda p: p.raw.update({"tritonkit.yaml": "models:\n  encoder: {backend: python}\n  encoder: {backend: "
                                                   "python}\n"}), T + "line 3, column 3: ",
         ("duplicate key 'encoder'",)),
    Case("yaml-duplicate-nested-key",
         lambda p: p.raw.update({"tritonkit.yaml": "models:\n  encoder:\n    max_batch_size: 8\n    max_batch_size: "
                                                   "16\n"}), T + "line 4, column 5: ",
         ("duplicate key 'max_batch_size'",)),
    Case("yaml-top-level-list", lambda p: p.raw.update({"tritonkit.yaml": "- encoder\n- counter\n"}), T + "top level: ",
         ("is a list, not a mapping",)),
    Case("yaml-top-level-scalar", lambda p: p.raw.update({"tritonkit.yaml": "just some text\n"}), T + "top level: ",
         ("is a str, not a mapping",)),
    Case("yaml-empty-file", lambda p: p.raw.update({"tritonkit.yaml": "# nothing here yet\n"}), T + "models: ",
         ("no models are defined",)),
    Case("yaml-two-documents", lambda p: p.raw.update({"tritonkit.yaml": "version: 1\n---\nversion: 1\n"}),
         T + "line 2, column 1: ",
         exact=T + "line 2, column 1: invalid YAML: expected a single document in the stream, but found another "
                   "document; fix the YAML syntax at that position"),
    Case("yaml-included-file-not-utf8", include_latin1, "ensembles/latin1.yaml: line 2, column 13 (byte 17): ",
         exact="ensembles/latin1.yaml: line 2, column 13 (byte 17): not UTF-8 text (byte 0xe8 cannot be decoded); save "
               "the file as UTF-8"),
    Case("yaml-broken-included-file", lambda p: p.raw.update({"ensembles/pipe.yaml": "models: {pre: [}\n"}),
         P + "line 1, column 16: ", ("invalid YAML",)),
    # --- unknown keys, with the closest known key as the fix
    Case("unknown-key-top-level", lambda p: p.top.update(modles=p.top.pop("models")), T + "modles: ",
         ("did you mean 'models'?",)),
    Case("unknown-key-model",
         lambda p: p.model("encoder").update(max_batchsize=p.model("encoder").pop("max_batch_size")),
         E + "max_batchsize: ",
         exact=T + "models.encoder.max_batchsize: unknown key 'max_batchsize'; did you mean 'max_batch_size'?"),
    Case("unknown-key-model-in-include",
         lambda p: p.model("cls").update(max_batch_sise=p.model("cls").pop("max_batch_size")),
         P + "models.cls.max_batch_sise: ", ("did you mean 'max_batch_size'?",)),
    Case("unknown-key-dynamic-batching",
         lambda p: dyn(p).update(prefered_batch_size=dyn(p).pop("preferred_batch_size")),
         E + "dynamic_batching.prefered_batch_size: ", ("did you mean 'preferred_batch_size'?",)),
    Case("unknown-key-input", lambda p: p.model("encoder")["input"][0].update(data_typ="TYPE_FP32"),
         E + "input[0].data_typ: ", ("did you mean 'data_type'?",)),
    Case("unknown-key-initial-state", lambda p: seq(p)["state"][0]["initial_state"][0].update(zero=True),
         C + "sequence_batching.state[0].initial_state[0].zero: ", ("did you mean 'zero_data'?",)),
    Case("unknown-key-deploy", lambda p: p.top.update(deploy={"http_prot": 8000}), T + "deploy.http_prot: ",
         ("did you mean 'http_port'?",)),
    # --- wrong types
    Case("type-max-batch-size-string", lambda p: p.model("encoder").update(max_batch_size="lots"),
         E + "max_batch_size: ", ("expected a whole number, got 'lots'",)),
    Case("type-dims-scalar", lambda p: p.model("encoder")["input"][0].update(dims=16), E + "input[0].dims: ",
         ("expected a list",)),
    Case("type-dims-element", lambda p: p.model("encoder")["input"][0].update(dims=["sixteen"]),
         E + "input[0].dims[0]: ", ("expected a whole number",)),
    Case("type-models-is-list", lambda p: p.top.update(models=["encoder"]), T + "models: ",
         ("expected a mapping, got list",)),
    Case("type-bool-as-word", lambda p: dyn(p).update(preserve_ordering="sure"),
         E + "dynamic_batching.preserve_ordering: ", ("expected true or false",)),
    Case("type-parameter-list", lambda p: p.model("encoder").update(parameters={"threads": [1, 2]}),
         E + "parameters.threads: ", ("expected a string",)),
    Case("type-model-name-int", lambda p: rename_model(p, "encoder", 5), T + "models.5: ",
         ("expected a string, got int 5",)),
    Case("type-model-name-yes", lambda p: p.raw.update({"tritonkit.yaml": "models:\n  yes: {backend: python}\n"}),
         T + "models.true: ",
         exact='tritonkit.yaml: models.true: the key is read as boolean true, not a name (YAML 1.1 reads unquoted yes, '
               'no, on, off, true and false so); quote it, e.g. "yes": or "on":'),
    Case("type-model-name-null", lambda p: rename_model(p, "encoder", None), T + "models.null: ",
         exact='tritonkit.yaml: models.null: the key is read as null, not a name (YAML reads an unquoted null or ~ '
               'so); quote it, e.g. "null":'),
    Case("type-value-null", lambda p: p.model("encoder").update(max_batch_size=None), E + "max_batch_size: ",
         exact=E + "max_batch_size: expected a whole number, got null (empty); write an integer"),
    Case("type-model-null", lambda p: p.top["models"].update(encoder=None), T + "models.encoder: ",
         ("expected a mapping, got null (empty)",)),
    Case("type-int-beyond-int32", lambda p: p.model("encoder").update(max_batch_size=3_000_000_000),
         E + "max_batch_size: ", ("Value out of range: 3000000000",)),
    Case("type-include-string", lambda p: p.top.update(include="ensembles/pipe.yaml"), T + "include: ",
         ("expected a list",)),
    # --- bad enum values and data types
    Case("enum-instance-kind", lambda p: p.model("encoder")["instance_group"][0].update(kind="KIND_TPU"),
         E + "instance_group[0].kind: ", ("'KIND_TPU' is not allowed", "KIND_CPU")),
    Case("enum-control-kind", lambda p: seq(p)["control_input"][0]["control"][0].update(kind="CONTROL_SEQUENCE_BEGIN"),
         C + "sequence_batching.control_input[0].control[0].kind: ", ("CONTROL_SEQUENCE_START",)),
    Case("enum-spec-version", lambda p: p.top.update(version=2), T + "version: ", ("2 is not allowed",)),
    Case("enum-model-control-mode", lambda p: p.top.update(deploy={"model_control_mode": "auto"}),
         T + "deploy.model_control_mode: ", ("'auto' is not allowed",)),
    Case("dtype-unknown-name", lambda p: p.model("encoder")["input"][0].update(data_type="TYPE_FLOAT32"),
         E + "input[0].data_type: ", ("unknown data type 'TYPE_FLOAT32'", "FP32")),
    Case("dtype-not-a-string", lambda p: p.model("encoder")["output"][0].update(data_type=32),
         E + "output[0].data_type: ",
         exact=E + "output[0].data_type: expected a data type name, got int 32; write one such as TYPE_FP32 or fp32"),
    Case("dtype-control-corrid", lambda p: seq(p)["control_input"][1]["control"][0].update(data_type="uint128"),
         C + "sequence_batching.control_input[1].control[0].data_type: ", ("unknown data type",)),
    # --- model names that are not directory names
    Case("name-path-separator", lambda p: rename_model(p, "encoder", "nlp/encoder"), T + "models.nlp/encoder: ",
         ("path separator",)),
    Case("name-dotdot", lambda p: rename_model(p, "encoder", ".."), T + "models...: ", ("relative path component",)),
    Case("name-leading-dot", lambda p: rename_model(p, "encoder", ".encoder"), T + "models..encoder: ",
         ("starts with '.'",)),
    # --- includes
    Case("include-duplicate-model", lambda p: p.pipe["models"].update(encoder=p.pipe["models"]["pre"]),
         P + "models.encoder: ", ("already defined in tritonkit.yaml",)),
    Case("include-missing-file", lambda p: p.top["include"].append("ensembles/llm.yaml"), T + "include[1]: ",
         ("'ensembles/llm.yaml' not found",)),
    Case("include-cycle", lambda p: p.pipe.update(include=["../tritonkit.yaml"]), P + "include[0]: ", ("cycle",)),
    Case("include-self", lambda p: p.top["include"].append("tritonkit.yaml"), T + "include[1]: ", ("cycle",)),
    # --- model files
    Case("files-path-wrong", lambda p: p.model("encoder").update(files={"model.py": "models/encodr.py"}),
         E + "files.model.py: ", ("'models/encodr.py' not found",)),
    Case("files-python-without-model-py",
         lambda p: p.model("encoder").update(files={"helpers.py": "models/encoder.py"}), E + "files: ",
         ("no 'model.py'",)),
    Case("files-model-py-is-a-folder", lambda p: p.model("encoder")["files"].update({"model.py": "models"}),
         E + "files.model.py: ",
         exact=E + "files.model.py: 'models' is a folder, but the Python backend loads model.py as a file; "
                   "point model.py at the model's Python file (a folder can go in under another name, e.g. lib: "
                   "models)"),
    Case("files-python-no-files", lambda p: p.model("cls").pop("files"), P + "models.cls.files: ", ("no 'model.py'",)),
    Case("files-absolute-outside", lambda p: p.model("encoder")["files"].update({"model.py": "/etc/passwd"}),
         E + "files.model.py: ", ("'/etc/passwd' resolves to /etc/passwd", OUT)),
    Case("files-dotdot-outside", lambda p: p.model("encoder")["files"].update({"model.py": outside(p)}),
         E + "files.model.py: ", ("'../outside.py'", OUT)),
    Case("files-pipeline-dotdot-outside", lambda p: p.model("pre")["files"].update({"model.py": "../" + outside(p)}),
         P + "models.pre.files.model.py: ", ("'../../outside.py'", OUT)),
    Case("files-symlink-outside",
         lambda p: p.model("encoder")["files"].update({"model.py": symlink_out(p, "models/link.py")}),
         E + "files.model.py: ", ("resolves to /etc/passwd", OUT)),
    Case("files-folder-holds-symlink-outside", folder_with_symlink_out, E + "files.lib: ",
         ("'models/lib/secret' resolves to /etc/passwd", OUT)),
    Case("files-package-path-climbs-out",
         lambda p: p.model("encoder")["files"].update({"passwd": "tritonkit:" + "../" * 12 + "etc/passwd"}),
         E + "files.passwd: ", ("resolves to /etc/passwd", OUT)),
    Case("warmup-file-outside", lambda p: warmup_input(p).update(zero_data=None, input_data_file="/etc/passwd"),
         E + "model_warmup[0].inputs.TEXT.input_data_file: ", (OUT,)),
    Case("state-file-outside",
         lambda p: seq(p)["state"][0]["initial_state"][0].update(zero_data=None, data_file=outside(p, "init.bin")),
         C + "sequence_batching.state[0].initial_state[0].data_file: ", (OUT,)),
    Case("source-onnx-outside",
         lambda p: p.top["models"].update(imported={"max_batch_size": 4, "source": {"onnx": "/etc/passwd"}}),
         T + "models.imported.source.onnx: ", (OUT,)),
    Case("source-python-path-outside",
         lambda p: p.top["models"].update(imported={"max_batch_size": 4,
                                                    "source": {"python": "m:build", "python_path": [".", "/"]}}),
         T + "models.imported.source.python_path[1]: ", (OUT,)),
    Case("include-outside", lambda p: p.top["include"].append("/etc/passwd"), T + "include[1]: ", (OUT,)),
    Case("name-escapes-before-export", lambda p: add_exported_model(p, "../x"), T + "models.../x: ",
         ("relative path component",)),
    Case("name-separator-before-export", lambda p: add_exported_model(p, "a/b"), T + "models.a/b: ",
         ("path separator",)),
    Case("files-destination-escapes", lambda p: p.model("encoder")["files"].update({"../evil.py": "models/encoder.py"}),
         E + "files.../evil.py: ", ("leaves the model directory",)),
    # --- batching
    Case("dims-negative-with-smoke-case", lambda p: smoke_with_dims(p, [-3]), E + "input[0].dims: ",
         ("dims [-3] of 'TEXT' has a dimension that is 0 or below -1",)),
    Case("dims-zero-with-smoke-case", lambda p: smoke_with_dims(p, [0]), E + "input[0].dims: ",
         ("dims [0] of 'TEXT'",)),
    Case("dims-empty-with-smoke-case", lambda p: smoke_with_dims(p, []), E + "input[0].dims: ",
         ("'TEXT' has no dims",)),
    Case("preferred-above-max", lambda p: dyn(p).update(preferred_batch_size=[8, 64]),
         E + "dynamic_batching.preferred_batch_size: ",
         exact="tritonkit.yaml: models.encoder.dynamic_batching.preferred_batch_size: 64 > max_batch_size 32; lower it "
               "or raise max_batch_size"),
    Case("dynamic-and-sequence-batching", lambda p: p.model("counter").update(dynamic_batching={}),
         C.rstrip(".") + ": ", ("dynamic_batching and sequence_batching exclude each other",)),
    Case("dynamic-batching-without-batch-dim", lambda p: p.model("encoder").update(max_batch_size=0),
         E + "dynamic_batching.preferred_batch_size: ", ("8 > max_batch_size 0",)),
    Case("oldest-preferred-above-max",
         lambda p: seq(p).update(direct=None, oldest={"max_candidate_sequences": 2, "preferred_batch_size": [8]}),
         C + "sequence_batching.oldest.preferred_batch_size: ", ("8 > max_batch_size 4",)),
    Case("max-batch-size-negative", lambda p: p.model("encoder").update(max_batch_size=-1), E + "max_batch_size: ",
         ("-1 is out of range",)),
    # --- ensemble wiring
    Case("ensemble-input-not-consumed", lambda p: p.model("pipe")["input"].append(fp32("EXTRA", [4])),
         PIPE + "input[1]: ", ("'EXTRA' is not consumed",)),
    Case("ensemble-output-not-produced", lambda p: p.model("pipe")["output"].append(fp32("SCORES", [3])),
         PIPE + "output[1]: ", ("'SCORES' is not produced",)),
    Case("ensemble-step-input-unmapped", lambda p: p.step(1).update(input_map={}),
         PIPE + "ensemble_scheduling.step[1].input_map: ", ("required input 'FEATURES' of 'cls' is not mapped",)),
    Case("ensemble-unknown-step-model", lambda p: p.step(1).update(model_name="classifier"),
         PIPE + "ensemble_scheduling.step[1].model_name: ", ("model 'classifier' does not exist",)),
    Case("ensemble-unknown-step-input-name", lambda p: p.step(0).update(input_map={"IMAGE": "RAW"}),
         PIPE + "ensemble_scheduling.step[0].input_map.IMAGE: ", ("'pre' has no input 'IMAGE'",)),
    Case("ensemble-unknown-step-output-name", lambda p: p.step(0).update(output_map={"FEATS": "feats"}),
         PIPE + "ensemble_scheduling.step[0].output_map.FEATS: ", ("'pre' has no output 'FEATS'",)),
    Case("ensemble-dangling-tensor", lambda p: p.step(1).update(input_map={"FEATURES": "featz"}),
         PIPE + "ensemble_scheduling.step[1].input_map.FEATURES: ",
         ("'featz' is neither an ensemble input nor produced",)),
    Case("ensemble-dtype-mismatch", lambda p: p.model("cls")["input"][0].update(data_type="TYPE_FP16"),
         PIPE + "ensemble_scheduling.step[1].input_map.FEATURES: ", ("TYPE_FP16", "TYPE_FP32")),
    Case("ensemble-shape-mismatch", lambda p: p.model("cls")["input"][0].update(dims=[5]),
         PIPE + "ensemble_scheduling.step[1].input_map.FEATURES: ", ("dims [5]", "dims [4]")),
    Case("ensemble-two-producers", lambda p: p.step(1).update(output_map={"PROBS": "feats"}),
         PIPE + "ensemble_scheduling.step[1].output_map.PROBS: ", ("'feats' is already produced by step 0",)),
    Case("ensemble-tensor-cycle", tensor_cycle, PIPE + "ensemble_scheduling.step[0]: ", ("'loop_b'", "cycle")),
    Case("ensembles-call-each-other", add_outer_ensemble_calling_pipe, PIPE + "ensemble_scheduling: ",
         ("pipe -> outer -> pipe",)),
    Case("ensemble-calls-itself", lambda p: p.step(1).update(model_name="pipe", input_map={"RAW": "feats"}),
         PIPE + "ensemble_scheduling.step[1].model_name: ", ("cannot call itself",)),
    Case("ensemble-instance-group", lambda p: p.model("pipe").update(instance_group=[{"kind": "KIND_CPU"}]),
         PIPE + "instance_group: ", ("no instances of its own",)),
    Case("ensemble-step-version-missing", lambda p: p.step(1).update(model_version=2),
         PIPE + "ensemble_scheduling.step[1].model_version: ", ("version 2 of 'cls'", "only version(s) 1")),
    Case("ensemble-batch-above-step", lambda p: p.model("cls").update(max_batch_size=8), PIPE + "max_batch_size: ",
         ("16 > max_batch_size 8 of step model 'cls'",)),
    # --- sequence controls
    Case("sequence-duplicate-start",
         lambda p: seq(p)["control_input"].append({"name": "BEGIN", "control": [{"kind": "CONTROL_SEQUENCE_START"}]}),
         C + "sequence_batching.control_input: ", ("CONTROL_SEQUENCE_START is given 2 times",)),
    Case("sequence-corrid-float", lambda p: seq(p)["control_input"][1]["control"][0].update(data_type="TYPE_FP32"),
         C + "sequence_batching.control_input[1].control[0].data_type: ", ("TYPE_FP32 is not allowed",)),
    Case("sequence-two-false-true-pairs",
         lambda p: seq(p)["control_input"][0]["control"][0].update(int32_false_true=[0, 1],
                                                                    bool_false_true=[False, True]),
         C + "sequence_batching.control_input[0].control[0]: ", ("exactly one false/true pair",)),
    Case("sequence-direct-and-oldest", lambda p: seq(p).update(oldest={"max_candidate_sequences": 2}),
         C + "sequence_batching: ", ("direct and oldest are both set",)),
    # --- implicit state
    Case("state-order-mixes-up-states", lambda p: set_state(p, [("A_in", "Z_out"), ("B_in", "Y_out")]),
         C + "sequence_batching.state: ", ("'A_in'->'Z_out'", "'B_in'->'Y_out'")),
    Case("state-initial-two-sources", lambda p: seq(p)["state"][0]["initial_state"][0].update(data_file="init.bin"),
         C + "sequence_batching.state[0].initial_state[0]: ", ("zero_data and data_file are both set",)),
    Case("state-initial-file-missing",
         lambda p: seq(p)["state"][0]["initial_state"][0].update(zero_data=None, data_file="state/init.bin"),
         C + "sequence_batching.state[0].initial_state[0].data_file: ", ("'state/init.bin' not found",)),
    # --- warmup
    Case("warmup-wrong-dtype", lambda p: warmup_input(p).update(data_type="TYPE_INT64"),
         E + "model_warmup[0].inputs.TEXT.data_type: ", ("TYPE_INT64 but the input is TYPE_FP32",)),
    Case("warmup-wrong-dims", lambda p: warmup_input(p).update(dims=[15]), E + "model_warmup[0].inputs.TEXT.dims: ",
         ("[15] does not fit", "[16]")),
    Case("warmup-missing-required-input", lambda p: p.model("encoder")["input"].append(fp32("MASK", [16])),
         E + "model_warmup[0].inputs: ", ("no data for required input(s) MASK",)),
    Case("warmup-input-data-file-missing",
         lambda p: warmup_input(p).update(zero_data=None, input_data_file="warmup/text.bin"),
         E + "model_warmup[0].inputs.TEXT.input_data_file: ", ("'warmup/text.bin' not found",)),
    Case("warmup-two-sources", lambda p: warmup_input(p).update(random_data=True), E + "model_warmup[0].inputs.TEXT: ",
         ("zero_data and random_data are both set",)),
    # --- versions
    Case("version-policy-two-choices",
         lambda p: p.model("encoder").update(version_policy={"latest": {"num_versions": 1}, "all": {}}),
         E + "version_policy: ", ("latest and all are both set",)),
    Case("version-policy-none-chosen", lambda p: p.model("encoder").update(version_policy={}), E + "version_policy: ",
         ("no policy is chosen",)),
    Case("versions-repeated", lambda p: p.model("encoder").update(versions=[1, 1]), E + "versions: ",
         ("not distinct",)),
    # --- priority levels
    Case("priority-default-above-levels", lambda p: dyn(p).update(priority_levels=2, default_priority_level=3),
         E + "dynamic_batching.default_priority_level: ", ("3 > priority_levels 2",)),
    Case("priority-default-missing", lambda p: dyn(p).update(priority_levels=2),
         E + "dynamic_batching.default_priority_level: ", ("must be set when priority_levels is set",)),
    Case("priority-queue-policy-unknown-level",
         lambda p: dyn(p).update(priority_levels=2, default_priority_level=1,
                                 priority_queue_policy={5: {"max_queue_size": 4}}),
         E + "dynamic_batching.priority_queue_policy.5: ", ("level 5 outside 1..2",)),
]

# A sample rerun as a separate process: YAML, schema, include, file, semantic and ensemble failures.
PROCESS_LEVEL = [
    "yaml-duplicate-model-key",
    "unknown-key-model",
    "include-cycle",
    "files-python-without-model-py",
    "preferred-above-max",
    "ensemble-dtype-mismatch",
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose good spec has been built once: model_repository/ and docker-compose.yml exist."""
    root = tmp_path_factory.mktemp("good") / "project"
    root.mkdir()
    Project(root).save()
    outcome = run_in_process(["build"], root)
    assert outcome.exit_code == 0, outcome.stderr
    assert (root / "model_repository" / "pipe" / "config.pbtxt").is_file()
    assert (root / "docker-compose.yml").is_file()
    return root


def broken_copy(built: Path, tmp_path: Path, case: Case) -> Path:
    root = tmp_path / "project"
    shutil.copytree(built, root)
    project = Project(root)
    case.breaks(project)
    project.save()
    return root


def check(case: Case, run: Callable[[list[str], Path], Any], built: Path, tmp_path: Path) -> None:
    root = broken_copy(built, tmp_path, case)
    before = snapshot(root)
    assert "model_repository/README.md" in before and "docker-compose.yml" in before
    lines = assert_one_line_errors(run(["build"], root), case.first)
    for text in case.contains:
        assert text in lines[0], f"{text!r} not in {lines[0]!r}"
    if case.exact is not None:
        assert lines[0] == case.exact
    assert snapshot(root) == before, "a failed build changed the project directory"


def test_case_ids_are_unique_and_enough() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)) and len(ids) >= 35
    assert set(PROCESS_LEVEL) <= set(ids)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_spec_is_refused(case: Case, built: Path, tmp_path: Path) -> None:
    check(case, run_in_process, built, tmp_path)


@pytest.mark.slow  # `python -m tritonkit` child processes: seconds each
@pytest.mark.parametrize("case", [c for c in CASES if c.id in PROCESS_LEVEL], ids=lambda c: c.id)
def test_process_level(case: Case, built: Path, tmp_path: Path) -> None:
    check(case, run_subprocess, built, tmp_path)


def test_dry_run_and_json_report_the_same_problem(built: Path, tmp_path: Path) -> None:
    """--dry-run refuses the same way, and --json puts the located problems on stdout too."""
    case = next(c for c in CASES if c.id == "preferred-above-max")
    root = broken_copy(built, tmp_path, case)
    before = snapshot(root)
    dry = run_in_process(["build", "--dry-run"], root)
    assert_one_line_errors(dry, case.exact or "")
    as_json = run_in_process(["build", "--json"], root)
    assert_one_line_errors(as_json, case.exact or "")
    import json

    payload = json.loads(as_json.stdout)
    assert payload["ok"] is False
    assert payload["errors"][0] == {
        "file": "tritonkit.yaml",
        "field": "models.encoder.dynamic_batching.preferred_batch_size",
        "problem": "64 > max_batch_size 32",
        "fix": "lower it or raise max_batch_size",
    }
    assert snapshot(root) == before


@pytest.mark.parametrize("args", [["build"], ["build", "-f", "specs/missing.yaml"]], ids=["default", "dash-f"])
def test_missing_spec_file_is_one_line(args: list[str], tmp_path: Path) -> None:
    """No spec file: the file is named, the field says it is the file itself, and nothing is written."""
    shown = args[-1] if "-f" in args else "tritonkit.yaml"
    outcome = run_in_process(args, tmp_path)
    line = f"{shown}: file: not found; create it or pass the right path with -f"
    assert assert_one_line_errors(outcome, line) == [line]
    assert list(tmp_path.iterdir()) == []
