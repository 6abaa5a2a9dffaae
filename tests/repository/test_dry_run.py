"""`build --dry-run` runs no export and writes nothing, even when an ensemble calls the model to export."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import onnx
import pytest
import yaml
from onnx import TensorProto, helper

from tests.cli.cli_contract import assert_one_line_errors, run_in_process, snapshot


def write_project(root: Path, step_model: str = "double") -> None:
    """An ONNX file to export (`double`) and an ensemble `pipe` that calls `step_model`."""
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["y"])], "double",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
    )
    onnx.save(helper.make_model(graph), root / "double.onnx")
    fp32 = {"data_type": "fp32", "dims": [4]}
    models: dict[str, Any] = {
        "double": {"max_batch_size": 4, "source": {"onnx": "double.onnx"}},
        "pipe": {
            "platform": "ensemble", "max_batch_size": 4,
            "input": [{"name": "IN", **fp32}], "output": [{"name": "OUT", **fp32}],
            "ensemble_scheduling": {"step": [{"model_name": step_model, "input_map": {"x": "IN"},
                                              "output_map": {"y": "OUT"}}]},
        },
    }
    (root / "tritonkit.yaml").write_text(yaml.safe_dump({"version": 1, "models": models}, sort_keys=False))


def test_dry_run_trusts_the_pending_export_and_writes_nothing(tmp_path: Path) -> None:
    write_project(tmp_path)
    before = snapshot(tmp_path)
    outcome = run_in_process(["build", "--dry-run", "--json"], tmp_path)
    assert outcome.exit_code == 0, outcome.stderr
    summary = json.loads(outcome.stdout)
    assert summary["pending_exports"] == ["double"] and summary["exports"] == {}
    assert {"double/config.pbtxt", "pipe/config.pbtxt"} <= set(summary["files"])
    assert snapshot(tmp_path) == before


def test_dry_run_still_refuses_a_step_model_that_does_not_exist(tmp_path: Path) -> None:
    write_project(tmp_path, step_model="dubble")
    before = snapshot(tmp_path)
    lines = assert_one_line_errors(run_in_process(["build", "--dry-run"], tmp_path),
                                   "tritonkit.yaml: models.pipe.ensemble_scheduling.step[0].model_name: ")
    assert "model 'dubble' does not exist" in lines[0]
    assert snapshot(tmp_path) == before


@pytest.mark.slow  # a real build with exports: seconds
def test_the_real_build_then_exports_and_checks_the_wiring(tmp_path: Path) -> None:
    write_project(tmp_path)
    outcome = run_in_process(["build", "--json"], tmp_path)
    assert outcome.exit_code == 0, outcome.stderr
    assert json.loads(outcome.stdout)["exports"]["double"]["cache_hit"] is False
    assert (tmp_path / "model_repository" / "double" / "1" / "model.onnx").is_file()
