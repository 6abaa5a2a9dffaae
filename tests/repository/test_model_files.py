"""`files:` sources `model:<other>/<file>`: a model gets its own copy of a file another model's build made.

Triton from s3:// downloads each model into a folder of its own; these copies are how a model stops reading a
sibling's folder. Real builds through the CLI, real files.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.slow  # builds through the CLI: seconds each

SPEC = """
version: 1
models:
  maker:
    backend: python
    input: [{name: X, data_type: TYPE_FP32, dims: [1]}]
    output: [{name: Y, data_type: TYPE_FP32, dims: [1]}]
    files: {model.py: model.py, table.json: table.json, lib: lib}
  user:
    backend: python
    input: [{name: X, data_type: TYPE_FP32, dims: [1]}]
    output: [{name: Y, data_type: TYPE_FP32, dims: [1]}]
    files: {model.py: model.py, table.json: TABLE, helper.py: model:maker/lib/helper.py}
"""


def project(tmp_path: Path, table: str = "model:maker/table.json", spec: str = SPEC) -> Path:
    (tmp_path / "model.py").write_text("# a model\n")
    (tmp_path / "table.json").write_text('{"a": 1}\n')
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helper.py").write_text("HELP = 1\n")
    (tmp_path / "tritonkit.yaml").write_text(spec.replace("TABLE", table))
    return tmp_path


def test_a_model_gets_its_own_copy_of_another_models_built_file(tmp_path: Path) -> None:
    root = project(tmp_path)
    result = run_cli("build", cwd=root)
    assert result.returncode == 0, result.stderr
    repo = root / "model_repository"
    assert (repo / "user" / "1" / "table.json").read_bytes() == (repo / "maker" / "1" / "table.json").read_bytes()
    assert (repo / "user" / "1" / "helper.py").read_text() == "HELP = 1\n"  # a file inside a copied folder
    assert (
        "user: copied helper.py (model:maker/lib/helper.py), table.json (model:maker/table.json)"
        in result.stdout.splitlines()
    )
    listed = json.loads(run_cli("build", "--json", cwd=root).stdout)
    assert listed["model_files"] == {"user": {"helper.py": "model:maker/lib/helper.py",
                                              "table.json": "model:maker/table.json"}}


def test_a_chain_of_references_reaches_the_file(tmp_path: Path) -> None:
    chained = SPEC + """  third:
    backend: python
    input: [{name: X, data_type: TYPE_FP32, dims: [1]}]
    output: [{name: Y, data_type: TYPE_FP32, dims: [1]}]
    files: {model.py: model.py, table.json: model:user/table.json}
"""
    root = project(tmp_path, spec=chained)
    assert run_cli("build", cwd=root).returncode == 0
    assert (root / "model_repository" / "third" / "1" / "table.json").read_text() == '{"a": 1}\n'


def test_a_dry_run_reports_the_copies_it_would_make_and_writes_nothing(tmp_path: Path) -> None:
    result = run_cli("build", "--dry-run", cwd=project(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "  user/1/table.json" not in result.stdout.splitlines()  # the other model's build has not run
    assert (
        "user: would copy helper.py (model:maker/lib/helper.py), table.json (model:maker/table.json)"
        in result.stdout.splitlines()
    )
    listed = json.loads(run_cli("build", "--dry-run", "--json", cwd=tmp_path).stdout)
    assert listed["model_files"] == {"user": {"helper.py": "model:maker/lib/helper.py",
                                              "table.json": "model:maker/table.json"}}
    assert not (tmp_path / "model_repository").exists()


@pytest.mark.parametrize(("table", "expected"), [
    ("model:makr/table.json",
     "tritonkit.yaml: models.user.files.table.json: 'model:makr/table.json' names no model of the spec; "
                              "write model:<model>/<file> with one of: maker"),
    ("model:maker/vocab.json",
     "tritonkit.yaml: models.user.files.table.json: model 'maker' has no file 'vocab.json' in its version "
                               "folder; give 'maker' one (files: {vocab.json: <path>}) or name one of what its build "
                               "puts there (lib, model.py, table.json)"),
    ("model:user/model.py",
     "tritonkit.yaml: models.user.files.table.json: 'model:user/model.py' names this model itself; "
                            "name the file by its path instead (model:<model>/<file> copies another model's file)"),
    ("model:maker/../secret",
     "tritonkit.yaml: models.user.files.table.json: model 'maker' has no file '../secret' in its"),
])
def test_an_unknown_model_or_file_is_refused_at_load_in_one_line(tmp_path: Path, table: str, expected: str) -> None:
    result = run_cli("build", cwd=project(tmp_path, table))
    assert result.returncode == 2
    assert result.stderr.startswith(expected), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "model_repository").exists()


def test_a_cycle_of_references_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    cycle = SPEC.replace("table.json: table.json", "table.json: model:user/table.json")
    result = run_cli("build", cwd=project(tmp_path, spec=cycle))
    assert result.returncode == 2
    assert result.stderr.startswith(
        "tritonkit.yaml: models.maker.files.table.json: model: files form a cycle "
        "(maker -> user -> maker); copy the file from the model that makes it"
    ), result.stderr
    assert not (tmp_path / "model_repository").exists()


PARAMETERS = SPEC.replace("    files: {model.py: model.py, table.json: table.json, lib: lib}",
                          "    parameters: {frames: 103}\n    files: {model.py: model.py, table.json: table.json, lib: "
                          "lib}").replace(
    "    files: {model.py: model.py, table.json: TABLE",
    "    parameters: {frames: FRAMES}\n    files: {model.py: model.py, table.json: TABLE")


def test_a_parameter_takes_another_models_value_into_its_own_config(tmp_path: Path) -> None:
    root = project(tmp_path, spec=PARAMETERS.replace("FRAMES", "model:maker/frames"))
    assert run_cli("build", cwd=root).returncode == 0
    config = (root / "model_repository" / "user" / "config.pbtxt").read_text()
    assert 'parameters { key: "frames" value: { string_value: "103" } }' in config


@pytest.mark.parametrize(("frames", "expected"), [
    ("model:maker/frame", "tritonkit.yaml: models.user.parameters.frames: model 'maker' has no parameter 'frame'; "
                          "set models.maker.parameters.frame (it has frames)"),
    ("model:nobody/frames",
     "tritonkit.yaml: models.user.parameters.frames: 'model:nobody/frames' names no other model of the spec; "
                            "write model:<model>/<parameter> with one of: maker"),
])
def test_a_parameter_of_an_unknown_model_or_name_is_refused_in_one_line(
    tmp_path: Path, frames: str, expected: str
) -> None:
    result = run_cli("build", cwd=project(tmp_path, spec=PARAMETERS.replace("FRAMES", frames)))
    assert result.returncode == 2
    assert result.stderr.strip() == expected
