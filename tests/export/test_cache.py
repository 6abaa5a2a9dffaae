"""The export cache: unchanged inputs skip the export; a change to code, weights or options re-exports."""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest
import torch

pytestmark = pytest.mark.slow  # exports in the child process (torch): minutes, so out of the unit subset

CODE = '''
import torch

SCALE = {scale}


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.lin(x) * SCALE


def build():
    model = Scaled()
    model.load_state_dict(torch.load(__file__.replace(".py", ".pt")))  # read with open(): tracked
    return model, (torch.randn(2, 4, generator=torch.Generator().manual_seed(0)),)
'''

OPTIONS = {"exporter": "torchscript"}


def save_weights(path: Path, seed: int) -> None:
    torch.manual_seed(seed)
    torch.save({f"lin.{k}": v for k, v in torch.nn.Linear(4, 3).state_dict().items()}, path)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "scaled.py").write_text(CODE.format(scale=2.0))
    save_weights(tmp_path / "scaled.pt", seed=0)
    return tmp_path


def export(exporter, project: Path, options=OPTIONS):
    return exporter("scaled", {"python": "scaled:build"}, options, 4, project_dir=project,
                    cache_dir=project / ".tritonkit" / "cache" / "export")


def golden_output(result) -> np.ndarray:
    with np.load(result.golden_files[0]) as data:
        return data["output:output"]


def test_second_export_is_a_cache_hit(exporter, project):
    cold = export(exporter, project)
    assert not cold.cache_hit
    onnx_bytes = cold.onnx_path.read_bytes()
    cold.onnx_path.unlink()  # the hit must reinstall the files
    started = time.monotonic()
    warm = export(exporter, project)
    assert warm.cache_hit and warm.cache_key == cold.cache_key
    assert time.monotonic() - started < 2.0
    assert warm.onnx_path.read_bytes() == onnx_bytes
    assert warm.signature == cold.signature and warm.max_errors == cold.max_errors
    assert (project / ".tritonkit" / "cache" / "export" / cold.cache_key / "manifest.json").is_file()
    os.utime(project / "scaled.py")  # a touch without a content change is still a hit
    assert export(exporter, project).cache_hit


def test_code_change_misses(exporter, project):
    first = export(exporter, project)
    before = golden_output(first)
    (project / "scaled.py").write_text(CODE.format(scale=3.0))
    second = export(exporter, project)
    assert not second.cache_hit and second.cache_key == first.cache_key  # same spec, changed dependency
    np.testing.assert_allclose(golden_output(second), before * 1.5, rtol=1e-5, atol=1e-6)


def test_weights_change_misses(exporter, project):
    export(exporter, project)
    save_weights(project / "scaled.pt", seed=1)
    assert not export(exporter, project).cache_hit


def test_options_change_misses(exporter, project):
    first = export(exporter, project)
    second = export(exporter, project, {**OPTIONS, "opset": 17})
    assert not second.cache_hit and second.cache_key != first.cache_key
    assert export(exporter, project).cache_hit  # the first entry is still there
