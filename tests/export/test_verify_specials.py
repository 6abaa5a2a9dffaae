"""Verification against references holding inf or NaN, on a real one-node ONNX graph in onnxruntime.

A matched inf or NaN is equal; an inf or NaN on one side only is a mismatch that no tolerance excuses
(atol + rtol * |inf| is inf, so a bound built from the reference alone let any answer through).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from tritonkit.errors import Where
from tritonkit.export import VerificationError
from tritonkit.export.cases import Case
from tritonkit.export.verify import verify
from tritonkit.spec.export import ToleranceSpec

INF, NAN = np.inf, np.nan


@pytest.fixture(scope="module")
def identity(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """y = x, float32 [3]."""
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "identity",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    path = tmp_path_factory.mktemp("specials") / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def _verify(path: Path, ours: list[float], torch: list[float]) -> None:
    case = Case("example", {"x": np.array(ours, np.float32)})
    verify(path, lambda _inputs: {"y": np.array(torch, np.float32)}, [case], ["y"], ToleranceSpec(), model="m",
           where=Where("tritonkit.yaml", "models.m.export"))


@pytest.mark.parametrize(("ours", "torch"), [([1.0, 2.0, 3.0], [1.0, 2.0, INF]), ([1.0, 2.0, -INF], [1.0, 2.0, INF]),
                                             ([1.0, 2.0, 3.0], [1.0, 2.0, NAN]), ([1.0, 2.0, NAN], [1.0, 2.0, 3.0])])
def test_an_inf_or_nan_on_one_side_is_a_mismatch(identity: Path, ours: list[float], torch: list[float]) -> None:
    with pytest.raises(VerificationError) as info:
        _verify(identity, ours, torch)
    assert "output 'y' [3] differs from PyTorch" in info.value.problem
    assert "at [2]" in info.value.problem


def test_matching_inf_and_nan_verify(identity: Path) -> None:
    _verify(identity, [INF, -INF, NAN], [INF, -INF, NAN])
