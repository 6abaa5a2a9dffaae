"""Fixtures for `tritonkit tune` tests: recorded Model Analyzer output, and a tiny project where batching matters."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "model_analyzer"

BATCHY = Path(__file__).resolve().parents[2] / "examples" / "batchy"


def write_batchy_project(root: Path) -> Path:
    """Copies the shipped example project where batching matters (every call: 20 ms + 1 ms per item); returns its
    spec."""
    shutil.copytree(BATCHY, root, dirs_exist_ok=True)
    return root / "tritonkit.yaml"


STEP_MODEL = '''
import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        out = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "{inp}").as_numpy()
            out.append(pb_utils.InferenceResponse([pb_utils.Tensor("{out}", ({expr}).astype(np.float32))]))
        return out
'''

PIPELINE_SPEC = """\
# preprocess -> classifier as one ensemble, defined in an included pipeline file (names as in the example project)
version: 1
include: [ensembles/classify.yaml]
models: {}
"""

PIPELINE_FILE = """\
models:
  preprocess:
    backend: python
    max_batch_size: 16
    input: [{name: RAW, data_type: TYPE_FP32, dims: [4]}]
    output: [{name: FEATURES, data_type: TYPE_FP32, dims: [4]}]
    dynamic_batching: {preferred_batch_size: [8, 16], max_queue_delay_microseconds: 500}
    instance_group: [{kind: KIND_CPU, count: 1}]
    files: {model.py: ../models/preprocess.py}
  classifier:
    backend: python
    max_batch_size: 16
    input:
      - {name: FEATURES, data_type: TYPE_FP32, dims: [4]}
    output:
      - {name: PROBS, data_type: TYPE_FP32, dims: [4]}
    dynamic_batching: {preferred_batch_size: [8, 16], max_queue_delay_microseconds: 500}
    instance_group: [{kind: KIND_CPU, count: 1}]
    files: {model.py: ../models/classifier.py}
  classify:
    platform: ensemble
    max_batch_size: 16
    input: [{name: RAW, data_type: TYPE_FP32, dims: [4]}]
    output: [{name: PROBS, data_type: TYPE_FP32, dims: [4]}]
    ensemble_scheduling:
      step:
        - {model_name: preprocess, input_map: {RAW: RAW}, output_map: {FEATURES: features}}
        - {model_name: classifier, input_map: {FEATURES: features}, output_map: {PROBS: PROBS}}
    smoke:
      - inputs: {RAW: [[1.0, 2.0, 3.0, 4.0]]}
        outputs: {PROBS: [[3.0, 5.0, 7.0, 9.0]]}
"""


def write_pipeline_project(root: Path) -> Path:
    """An ensemble project whose models live in an included file with their own relative paths."""
    (root / "models").mkdir(parents=True, exist_ok=True)
    (root / "ensembles").mkdir(exist_ok=True)
    (root / "models" / "preprocess.py").write_text(STEP_MODEL.format(inp="RAW", out="FEATURES", expr="x * 2"))
    (root / "models" / "classifier.py").write_text(STEP_MODEL.format(inp="FEATURES", out="PROBS", expr="x + 1"))
    (root / "ensembles" / "classify.yaml").write_text(PIPELINE_FILE)
    spec = root / "tritonkit.yaml"
    spec.write_text(PIPELINE_SPEC)
    return spec


@pytest.fixture()
def pipeline_project(tmp_path: Path) -> Path:
    return write_pipeline_project(tmp_path / "pipeline")


@pytest.fixture()
def batchy_project(tmp_path: Path) -> Path:
    return write_batchy_project(tmp_path / "project")


@pytest.fixture(scope="session")
def recorded() -> Path:
    return DATA
