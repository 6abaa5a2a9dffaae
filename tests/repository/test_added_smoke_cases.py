"""The project file's `smoke:` adds known answers to models an included pipeline file defines; tensor files
(`{file: x.npy}`, mono `.wav`) hold one request's tensor, relative to the spec that names them."""
from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import run_cli
from tritonkit.golden import read_cases

pytestmark = pytest.mark.slow  # builds through the CLI: seconds each

PIPE = """
models:
  scorer:
    backend: python
    max_batch_size: 8
    input: [{name: X, data_type: fp32, dims: [4]}]
    output: [{name: Y, data_type: fp32, dims: [4]}]
    instance_group: [{kind: KIND_CPU, count: 1}]
    files: {model.py: model.py}
    smoke:
      - inputs: {X: {file: own_x.npy}}
        outputs: {Y: [[2, 4, 6, 8]]}
  listener:
    backend: python
    input: [{name: PCM, data_type: fp32, dims: [-1]}]
    output: [{name: WORDS, data_type: TYPE_STRING, dims: [1]}]
    instance_group: [{kind: KIND_CPU, count: 1}]
    files: {model.py: model.py}
"""

SPEC = """
version: 1
include: [pipes/pipe.yaml]
smoke:
  scorer:
    - inputs: {X: {file: data/x.npy}}
      outputs: {Y: {file: data/y.npy}}
      atol: 0.01
  listener:
    - inputs: {PCM: {file: data/clip.wav}}
      outputs: {WORDS: [hello]}
"""

CLIP = np.array([0, 16384, -16384, 32767], dtype="<i2")


def _project(root: Path, spec: str = SPEC) -> Path:
    (root / "pipes").mkdir()
    (root / "data").mkdir()
    (root / "pipes" / "pipe.yaml").write_text(PIPE)
    (root / "pipes" / "model.py").write_text("# model\n")
    np.save(root / "pipes" / "own_x.npy", np.arange(1, 5, dtype=np.float32))
    np.save(root / "data" / "x.npy", np.array([1.5, 2, 3, 4], dtype=np.float64))   # converted to the input's type
    np.save(root / "data" / "y.npy", np.array([3, 4, 6, 8], dtype=np.float32))
    np.save(root / "data" / "short.npy", np.zeros(3, np.float32))
    with wave.open(str(root / "data" / "clip.wav"), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(CLIP.tobytes())
    (root / "tritonkit.yaml").write_text(spec)
    return root


def test_added_cases_follow_the_models_own_with_files_relative_to_their_spec(tmp_path: Path) -> None:
    result = run_cli("build", cwd=_project(tmp_path))
    assert result.returncode == 0, result.stderr
    repository = tmp_path / "model_repository"
    own, added = read_cases(repository / "scorer" / "golden")
    assert (own.name, added.name) == ("case000", "case001")
    np.testing.assert_array_equal(own.steps[0][0]["X"], [[1, 2, 3, 4]])   # pipes/own_x.npy, batch dim added
    assert added.steps[0][0]["X"].dtype == np.float32 and added.steps[0][0]["X"].shape == (1, 4)
    np.testing.assert_array_equal(added.steps[0][1]["Y"], [[3, 4, 6, 8]])
    assert added.atol == 0.01
    [clip] = read_cases(repository / "listener" / "golden")
    np.testing.assert_array_equal(clip.steps[0][0]["PCM"], CLIP / 32768.0)   # no batching: as read
    assert list(clip.steps[0][1]["WORDS"]) == [b"hello"]


def _refused(tmp_path: Path, spec: str) -> str:
    result = run_cli("build", cwd=_project(tmp_path, spec))
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "model_repository").exists()   # nothing half-written
    return result.stderr


def test_cases_for_an_unknown_model_are_refused(tmp_path: Path) -> None:
    stderr = _refused(tmp_path, SPEC.replace("  listener:\n", "  listner:\n"))
    assert stderr.startswith("tritonkit.yaml: smoke.listner: unknown model 'listner'; name a model of the spec "
                             "(scorer, listener)")


def test_a_tensor_file_outside_the_project_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    np.save(tmp_path / "outside.npy", np.zeros(4, np.float32))
    stderr = _refused(project, SPEC.replace("data/x.npy", "../outside.npy"))
    assert stderr.startswith("tritonkit.yaml: smoke.scorer[0]: '../outside.npy' resolves to ")
    assert "outside the project folder" in stderr


def test_unreadable_misshaped_or_unsupported_tensor_files_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    stderr = _refused(tmp_path / "a", SPEC.replace("data/x.npy", "data/missing.npy"))
    assert stderr.startswith("tritonkit.yaml: smoke.scorer[0].inputs.X.file: cannot read 'data/missing.npy'")
    (tmp_path / "b").mkdir()
    stderr = _refused(tmp_path / "b", SPEC.replace("data/x.npy", "data/short.npy"))
    assert stderr.startswith("tritonkit.yaml: smoke.scorer[0].inputs.X: shape [1, 3] does not fit [batch] + dims [4]")
    (tmp_path / "c").mkdir()
    stderr = _refused(tmp_path / "c", SPEC.replace("data/x.npy", "data/x.csv"))
    assert stderr.startswith("tritonkit.yaml: smoke.scorer[0]: X: a tensor is nested lists or {file: <path>.npy or "
                             "mono 16-bit .wav}")
