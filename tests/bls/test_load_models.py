"""Explicit model control with `deploy.load_models`: the startup set gains every declared BLS callee (Triton
loads an ensemble's steps itself, but a BLS model's callees only when they are named)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.cli_contract import assert_one_line_errors, run_in_process, snapshot
from tests.repository.test_compose_defaults import docker_compose


def write_bls_project(root: Path, deploy: dict[str, Any]) -> None:
    """A project that includes the shipped BLS pipeline (route, shrink, total and their callees)."""
    spec = {"version": 1, "include": ["tritonkit:ensembles/bls.yaml"], "deploy": deploy}
    (root / "tritonkit.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))


def load_flags(root: Path) -> list[str]:
    command = yaml.safe_load((root / "docker-compose.yml").read_text())["services"]["triton"]["command"]
    return [arg.removeprefix("--load-model=") for arg in command if arg.startswith("--load-model=")]


@pytest.mark.slow  # a full build: seconds
def test_named_models_load_with_their_callees_first(tmp_path: Path) -> None:
    write_bls_project(tmp_path, {"model_control_mode": "explicit", "load_models": ["route", "total"]})
    built = run_in_process(["build"], tmp_path)
    assert built.exit_code == 0, built.stderr
    flags = load_flags(tmp_path)
    assert sorted(flags) == ["count", "double", "negate", "route", "total"]  # not shrink, nor its callee halve
    assert flags.index("route") > max(flags.index("double"), flags.index("negate"))
    assert flags.index("total") > flags.index("count")
    check = docker_compose(tmp_path, "config", "-q", env={"TRITON_ADMIN_KEY": "k"})
    assert check.returncode == 0, check.stderr


def test_without_load_models_explicit_mode_loads_everything(tmp_path: Path) -> None:
    write_bls_project(tmp_path, {"model_control_mode": "explicit"})
    built = run_in_process(["build"], tmp_path)
    assert built.exit_code == 0, built.stderr
    assert load_flags(tmp_path) == ["*"]


@pytest.mark.parametrize(("deploy", "field", "text"), [
    ({"model_control_mode": "explicit", "load_models": ["route", "rout"]}, "deploy.load_models[1]",
     "unknown model 'rout'"),
    ({"load_models": ["route"]}, "deploy.load_models", "only explicit model control"),
])
def test_bad_load_models_are_refused(tmp_path: Path, deploy: dict[str, Any], field: str, text: str) -> None:
    write_bls_project(tmp_path, deploy)
    before = snapshot(tmp_path)
    lines = assert_one_line_errors(run_in_process(["build"], tmp_path), f"tritonkit.yaml: {field}: ")
    assert text in lines[0]
    assert snapshot(tmp_path) == before
