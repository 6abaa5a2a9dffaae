"""A tiny publishable project (`scale`: Y = X * K, behind the ensemble `pipeline`) and the moto S3 names the tests
share.

Every version gives a different, known answer, so a test tells which version a server serves.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

from tests.conftest import run_cli

BUCKET = "models"
PREFIX = "prod"
FAKE = {"AWS_ACCESS_KEY_ID": "AKIATRITONKITFAKE0001", "AWS_SECRET_ACCESS_KEY": "tritonkit/fake+secret/4f9c2e7d1b",
        "AWS_DEFAULT_REGION": "us-east-1"}

MODEL = '''
import numpy as np
import triton_python_backend_utils as pb_utils

K = {k}


class TritonPythonModel:
    def execute(self, requests):
        return [pb_utils.InferenceResponse([pb_utils.Tensor(
            "Y", (pb_utils.get_input_tensor_by_name(r, "X").as_numpy() * K).astype(np.float32))]) for r in requests]
'''

SPEC = '''
version: 1
models:
  scale:
    backend: python
    max_batch_size: 8
    input: [{{name: X, data_type: TYPE_FP32, dims: [1]}}]
    output: [{{name: Y, data_type: TYPE_FP32, dims: [1]}}]
    instance_group: [{{kind: KIND_CPU, count: 1}}]
    files: {{{files}}}
    smoke:
      - inputs: {{X: [[1.0]]}}
        outputs: {{Y: [[{expected}]]}}
  pipeline:
    platform: ensemble
    max_batch_size: 8
    input: [{{name: X, data_type: TYPE_FP32, dims: [1]}}]
    output: [{{name: Y, data_type: TYPE_FP32, dims: [1]}}]
    ensemble_scheduling:
      step:
        - {{model_name: scale, input_map: {{X: X}}, output_map: {{Y: Y}}}}
    smoke:
      - inputs: {{X: [[1.0]]}}
        outputs: {{Y: [[{expected}]]}}
'''


def build_version(project: Path, k: float, expected: float, pad_mb: int = 0) -> Path:
    """The project's model multiplies by `k`; its smoke cases expect `expected` (a wrong one makes a bad version)."""
    project.mkdir(parents=True, exist_ok=True)
    (project / "models").mkdir(exist_ok=True)
    (project / "models" / "scale.py").write_text(MODEL.format(k=k))
    files = "model.py: models/scale.py"
    if pad_mb:  # a large file, so a publish can be interrupted mid-upload
        (project / "models" / "pad.bin").write_bytes(np.random.default_rng(int(k)).bytes(pad_mb << 20))
        files += ", pad.bin: models/pad.bin"
    (project / "tritonkit.yaml").write_text(SPEC.format(files=files, expected=expected))
    result = run_cli("build", cwd=project, timeout=180)
    assert result.returncode == 0, result.stderr
    return project / "model_repository"


def cli(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd, timeout=timeout)
