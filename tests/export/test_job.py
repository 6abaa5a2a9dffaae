"""The export boundary: a job and an outcome survive the JSON round trip to the child, and a malformed one is refused
in one line naming the file and the field, by the reader and by a real child process."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tritonkit.export import ExportError, ExportJob, ExportOutcome
from tritonkit.export.isolation import child_env, command
from tritonkit.export.job import read, write
from tritonkit.export.signature import Signature, TensorSig
from tritonkit.spec.export import SourceSpec
from tritonkit.spec.schema import spec_schema

EXPORT = {"dynamic_axes": {"features": {1: "n"}}, "verify": {"lengths": {"n": [3, 5]}},
          "tensorrt": {"profiles": [{"min": {"x": [1, 2]}, "opt": {"x": [2, 2]}, "max": {"x": [4, 2]}}]}}
JOB = ExportJob("enc", SourceSpec(python="examples.models.mlp:build", kwargs={"width": 8}),
                spec_schema().export.model_validate(EXPORT), 4, Path("/project"), "specs/enc.yaml")
OUTCOME = ExportOutcome(
    name="enc", source_kind="python", files=["model.onnx"], opset=18, exporter="torchscript",
    exporter_reason="fallback: dynamo export failed: x",
    attempts=[{"exporter": "dynamo", "reason": "default", "stage": "export", "error": "x"}],
    signature=Signature([TensorSig("features", "TYPE_FP32", [-1])], [TensorSig("output", "TYPE_FP32", [3])]),
    dynamic_axes={"features": {0: "batch", 1: "n"}}, max_errors={"output": {"max_abs": 1e-7, "max_rel": 0.0}},
    cases=["example: features=[2, 16] -> output=[2, 3]"], output_sizes={"output": [[2, 3], [4, 3]]},
    golden=["000.npz", "tolerance.json"], weights_sha256="ab" * 32, deps=[{"dist": "torch", "version": "2.9.0"}],
    example_shapes={"features": [2, 16]}, tensorrt={"mode": "local", "engine": "model.plan"}, elapsed_s=1.5,
)


@pytest.mark.parametrize("value", [JOB, OUTCOME], ids=["job", "outcome"])
def test_round_trip(tmp_path: Path, value: ExportJob | ExportOutcome) -> None:
    path = tmp_path / "value.json"
    write(value, path)
    back = read(type(value), path)
    assert back == value
    if isinstance(back, ExportOutcome):
        assert back.dynamic_axes["features"][1] == "n"  # JSON keys are text; the axis comes back as an int


def test_job_points_errors_at_the_model() -> None:
    assert str(JOB.where) == "specs/enc.yaml: models.enc"
    assert str(JOB.where.at("export.opset")) == "specs/enc.yaml: models.enc.export.opset"


@pytest.mark.parametrize(
    ("change", "line"),
    [
        (lambda d: d.pop("max_batch_size"), "max_batch_size: not a valid export job: field required"),
        (lambda d: d.update(max_batch_size="four"), "max_batch_size: not a valid export job: input should be a valid "
                                                    "integer, unable to parse string as an integer"),
        (lambda d: d["source"].update(onnx="m.onnx"),
         "source: not a valid export job: value error, give exactly one of "
                                                      "python, torchscript, onnx (got python, onnx)"),
        (lambda d: d.update(out_dir="/tmp"), "out_dir: not a valid export job: unexpected keyword argument"),
    ],
    ids=["missing", "mistyped", "invalid-source", "unknown"],
)
def test_malformed_job_is_refused_in_one_line(tmp_path: Path, change, line: str) -> None:
    path = tmp_path / "job.json"
    write(JOB, path)
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    with pytest.raises(ExportError) as info:
        read(ExportJob, path)
    assert info.value.line() == f"{path}: {line}; run the export again (tritonkit writes a fresh job.json)"


def test_malformed_outcome_names_the_cache_slot_to_delete(tmp_path: Path) -> None:
    path = tmp_path / "key" / "artifacts" / "result.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"name": "enc"')
    with pytest.raises(ExportError) as info:
        read(ExportOutcome, path)
    assert info.value.line().startswith(f"{path}: not a valid export result: invalid json: ")
    assert info.value.fix == f"delete {tmp_path / 'key'} and run the export again"


@pytest.mark.slow  # starts the export child process (torch import): seconds
def test_child_reports_a_malformed_job_as_a_located_error(tmp_path: Path) -> None:
    """The real child process: exit code 3 and error.json, which the parent re-raises, instead of a traceback."""
    slot = tmp_path / "cache" / "0123abcd"
    slot.mkdir(parents=True)
    job = slot / "job.json"
    job.write_text(json.dumps({"name": "enc"}))
    run = subprocess.run(command(job), cwd=tmp_path, env=child_env([]), capture_output=True, text=True, timeout=120)
    assert run.returncode == 3, run.stdout + run.stderr
    error = json.loads((slot / "error.json").read_text())
    assert error["kind"] == "ExportError" and error["file"] == str(job) and error["field"] == "source"
    assert error["problem"] == "not a valid export job: field required"
    assert not (slot / "artifacts" / "result.json").exists()
