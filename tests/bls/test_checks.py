"""`bls: {calls: [...]}` is checked like ensemble steps: one `file: field: problem; fix` line each, exit 2."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.cli.cli_contract import assert_one_line_errors, run_in_process, snapshot
from tritonkit.repository.plan import make_plan
from tritonkit.spec.loader import load_project
from tritonkit.triton.model_graph import load_order


def model(**extra) -> dict:
    return {"backend": "python", "max_batch_size": 0,
            "input": [{"name": "X", "data_type": "TYPE_FP32", "dims": [1]}],
            "output": [{"name": "Y", "data_type": "TYPE_FP32", "dims": [1]}],
            "files": {"model.py": "model.py"}, **extra}


def write(tmp_path: Path, models: dict) -> Path:
    (tmp_path / "model.py").write_text("class TritonPythonModel:\n    pass\n")
    (tmp_path / "tritonkit.yaml").write_text(yaml.safe_dump({"version": 1, "models": models}))
    return tmp_path


def refused(tmp_path: Path, models: dict) -> list[str]:
    project = write(tmp_path, models)
    before = snapshot(project)
    outcome = run_in_process(["build"], project)
    lines = assert_one_line_errors(outcome, "tritonkit.yaml: models.")
    assert snapshot(project) == before, "a refused build wrote files"
    return lines


def test_missing_callee(tmp_path: Path) -> None:
    lines = refused(tmp_path, {"a": model(), "route": model(bls={"calls": ["a", "nope"]})})
    assert lines == ["tritonkit.yaml: models.route.bls.calls[1]: model 'nope' does not exist; define it, or call one "
                     "of: a"]


def test_cycle_through_bls_calls_and_an_ensemble(tmp_path: Path) -> None:
    ensemble = {
        "platform": "ensemble",
        "max_batch_size": 0,
        "input": [{"name": "X", "data_type": "TYPE_FP32", "dims": [1]}],
        "output": [{"name": "Y", "data_type": "TYPE_FP32", "dims": [1]}],
        "ensemble_scheduling": {"step": [{"model_name": "b", "input_map": {"X": "X"}, "output_map": {"Y": "Y"}}]},
    }
    lines = refused(tmp_path, {"a": model(bls={"calls": ["pipe"]}), "pipe": ensemble, "b": model(bls={"calls": ["a"]})})
    assert lines == ["tritonkit.yaml: models.a.bls.calls[0]: models call each other in a cycle: a -> pipe -> b -> a; "
                     "remove one of the calls or steps in the cycle"]


def test_a_model_calling_itself(tmp_path: Path) -> None:
    lines = refused(tmp_path, {"a": model(bls={"calls": ["a"]})})
    assert lines == ["tritonkit.yaml: models.a.bls.calls[0]: model 'a' cannot call itself; call another model, or loop "
                     "inside the model's own code"]


def test_decoupled_callee_from_a_caller_that_does_not_stream_warns(tmp_path: Path) -> None:
    """Triton lets a non-decoupled model collect a decoupled callee's responses: a warning, and the build goes on."""
    project = write(tmp_path,
                    {"count": model(model_transaction_policy={"decoupled": True}),
                     "total": model(bls={"calls": ["count"]})})
    plan = make_plan(load_project(project / "tritonkit.yaml"))
    assert [w.line().split("/")[-1] for w in plan.warnings] == [
        "tritonkit.yaml: models.total.bls.calls[0]: decoupled model 'count' streams responses but 'total' is not "
        "decoupled (Triton lets it call with exec(decoupled=True) and collect them); declare 'total' decoupled "
        "(model_transaction_policy: {decoupled: true}) if it should stream them on"]


def test_decoupled_callee_from_a_decoupled_caller_builds(tmp_path: Path) -> None:
    project = write(tmp_path, {"count": model(model_transaction_policy={"decoupled": True}),
                               "total": model(bls={"calls": ["count"]}, model_transaction_policy={"decoupled": True})})
    plan = make_plan(load_project(project / "tritonkit.yaml"))
    assert 'parameters { key: "bls_calls" value: { string_value: "count" } }' in plan.models["total"].config_text


def test_non_python_caller(tmp_path: Path) -> None:
    onnx = {k: v for k, v in model(bls={"calls": ["a"]}).items() if k not in ("backend", "files")} | {
        "backend": "onnxruntime"
    }
    lines = refused(tmp_path, {"a": model(), "enc": onnx})
    assert (
        lines[0]
        == "tritonkit.yaml: models.enc.bls: only a Python-backend model can call other models (BLS) but 'enc' is "
           "onnxruntime; set backend: python, or remove bls"
    )
    assert lines[1:] == ["tritonkit.yaml: models.enc.backend: version 1 has no model.onnx, which the onnxruntime "
                         "backend loads; add the model file to the model's files (files: {model.onnx: "
                         "path/to/model.onnx}) (or set default_model_filename)"]   # the container's file check


@pytest.mark.parametrize(("bls", "line"), [
    ({"calls": ["a", "a"]},
     "tritonkit.yaml: models.route.bls.calls: 'a' is listed more than once; list each called model once"),
    ({"calls": []}, "tritonkit.yaml: models.route.bls.calls: "),
    ({"call": ["a"]}, "tritonkit.yaml: models.route.bls.call: unknown key 'call'; did you mean 'calls'?"),
])
def test_schema(tmp_path: Path, bls: dict, line: str) -> None:
    lines = refused(tmp_path, {"a": model(), "route": model(bls=bls)})
    assert lines[0].startswith(line)


def test_parameter_is_written_from_the_declaration_only(tmp_path: Path) -> None:
    lines = refused(tmp_path, {"a": model(), "route": model(bls={"calls": ["a"]}, parameters={"bls_calls": "a"})})
    assert lines == ["tritonkit.yaml: models.route: parameters.bls_calls is written from bls.calls; remove it from "
                     "parameters"]


def test_load_order_puts_callees_and_steps_first(tmp_path: Path) -> None:
    project = write(tmp_path, {"route": model(bls={"calls": ["double", "negate"]}), "negate": model(),
                               "outer": model(bls={"calls": ["route"]}), "double": model()})
    plan = make_plan(load_project(project / "tritonkit.yaml"))
    assert load_order({n: m.config for n, m in plan.models.items()}) == ["double", "negate", "route", "outer"]
