"""Outputs whose length depends on the input values: the tiny FastPitch-like acoustic model of examples/tts_tiny.

Its length regulator repeats each token's encoding by the token's rounded, predicted duration, so the mel's frame
count is the sum of the durations: the export must leave that dim dynamic, verification must compare shapes
before values (naming the durations when a rounding came out differently), and a spec must not fix the size.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tritonkit.errors import Where
from tritonkit.export import ExportResult, SignatureError, VerificationError
from tritonkit.export.cases import Case
from tritonkit.export.verify import session, verify
from tritonkit.spec.export import ToleranceSpec
from tritonkit.spec.tensors import TensorOutput

from .conftest import REPO_ROOT, graph_io

pytestmark = pytest.mark.slow  # exports in the child process (torch): minutes, so out of the unit subset

TINY = REPO_ROOT / "examples" / "tts_tiny"
SOURCE = {"python": "models:build_acoustic"}
OPTIONS = {"dynamic_axes": {"tokens": {0: "tokens"}}, "verify": {"lengths": {"tokens": [3, 40]}}}


@pytest.fixture(scope="module")
def acoustic(exporter) -> ExportResult:
    return exporter("acoustic", SOURCE, OPTIONS, 0, project_dir=TINY)


def test_length_regulator_exports_with_a_dynamic_frame_axis_and_verifies(acoustic: ExportResult) -> None:
    io = graph_io(acoustic.model_files[0])
    assert isinstance(io["mel"][1][0], str) and io["mel"][1][1] == 20   # frames: a dim the data decides
    assert [o.dims for o in acoustic.signature.outputs] == [[-1, 20], [-1]]
    # every case was compared, and the frame counts differ from the token counts and between cases
    frames = [int(c.split("mel=[")[1].split(",")[0]) for c in acoustic.cases]
    tokens = [int(c.split("tokens=[")[1].split("]")[0]) for c in acoustic.cases]
    assert len(acoustic.cases) == 4 and len(set(frames)) == 4
    assert any(f != t for f, t in zip(frames, tokens))
    assert acoustic.max_errors["durations"]["max_abs"] == 0.0
    assert len(acoustic.golden_files) >= 2


def test_a_fixed_size_for_the_data_dependent_dim_is_refused(exporter, acoustic: ExportResult) -> None:
    outputs = [TensorOutput(name="mel", data_type="TYPE_FP32", dims=[40, 20])]
    with pytest.raises(SignatureError) as info:
        exporter("acoustic", SOURCE, OPTIONS, 0, project_dir=TINY, outputs=outputs)   # a cache hit: no re-export
    line = info.value.line()
    assert line.startswith("tritonkit.yaml: models.acoustic.output[0].dims: output 'mel' dims[0] is 40 but "
                           "verification saw sizes")
    assert "write -1 at dims[0]" in line


def _flipped(onnx_path: Path):
    """A reference that rounded the first token's duration one frame up: what float noise at x.5 would do."""
    sess = session(onnx_path)

    def reference(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        mel, durations = sess.run(["mel", "durations"], inputs)
        return {"mel": np.concatenate([mel[:1], mel]),
                "durations": durations + np.eye(1, durations.size, dtype=np.int64)[0]}

    return reference


def test_a_flipped_duration_is_named_before_the_mel_length(acoustic: ExportResult) -> None:
    onnx_path = acoustic.model_files[0]
    case = Case("example", {"tokens": np.arange(1, 9, dtype=np.int64), "pace": np.ones(1, np.float32)})
    with pytest.raises(VerificationError) as info:
        verify(onnx_path, _flipped(onnx_path), [case], ["mel", "durations"], ToleranceSpec(), model="acoustic",
               where=Where("tritonkit.yaml", "models.acoustic.export"))
    assert "output 'durations' [8] differs from PyTorch" in info.value.problem
    # without the durations among the outputs, the mel's length is the mismatch, with the hint to return them
    with pytest.raises(VerificationError) as info:
        verify(onnx_path, _flipped(onnx_path), [case], ["mel"], ToleranceSpec(), model="acoustic",
               where=Where("tritonkit.yaml", "models.acoustic.export"))
    assert "output 'mel' is float32[" in info.value.problem and "in onnxruntime but float32[" in info.value.problem
    assert "computed from values (e.g. rounded durations)" in info.value.fix
