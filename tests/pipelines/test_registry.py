"""Pipelines as plugins: one registry the core reads, a starter folder each, and pipeline-only spec fields in their
own sections (`asr: {graph}`, `tts: {assets}`), the old spellings read with one warning line naming the new one."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO_ROOT, run_cli
from tritonkit.package_files import package_path
from tritonkit.pipelines.registry import PIPELINES
from tritonkit.spec.loader import load_project

PACKAGE = REPO_ROOT / "toolkit" / "tritonkit"


def _pipeline_imports(path: Path) -> set[str]:
    """The `tritonkit.pipelines...` modules a source file imports, wherever the import statement is."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = (
            [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else []
        )
        found.update(n for n in names if n.startswith("tritonkit.pipelines"))
    return found


def test_the_core_imports_no_pipeline_module() -> None:
    """Every module outside pipelines/ (spec, repository, serve, publish, deploy, starters, cli, the gateway, ...):
    not even the registry, which the CLI names for `tritonkit.plugin.host` to import."""
    core = [path for path in sorted(PACKAGE.rglob("*.py")) if path.relative_to(PACKAGE).parts[0] != "pipelines"]
    imports = {path.relative_to(PACKAGE).as_posix(): _pipeline_imports(path) for path in core}
    assert {file: found for file, found in imports.items() if found} == {}


@pytest.mark.slow  # builds or inits through the CLI: seconds
def test_each_pipeline_is_its_folder_with_a_starter_and_init_offers_them() -> None:
    assert all(PIPELINES[name].name == name for name in PIPELINES)
    for name, pipeline in PIPELINES.items():
        assert (PACKAGE / "pipelines" / name / "plugin.py").is_file(), name
        assert package_path(f"pipelines/{name}/starter/tritonkit.yaml").is_file() == (pipeline.starter is not None), (
            name
        )
    helped = run_cli("init", "--help")
    assert helped.returncode == 0 and all(f"{name}: {PIPELINES[name].description}" in " ".join(helped.stdout.split())
                                          for name in PIPELINES if PIPELINES[name].starter is not None)
    schema = json.loads(run_cli("schema").stdout)["$defs"]["ModelSpec"]["properties"]
    assert {name for name, p in PIPELINES.items() if p.section is not None} <= set(schema)


def _spec(old: bool) -> dict:
    """Two models with pipeline sections (one spelled either way) and a third copying the files their steps make."""
    model = {"backend": "python", "input": [{"name": "X", "data_type": "TYPE_FP32", "dims": [-1]}],
             "output": [{"name": "Y", "data_type": "TYPE_FP32", "dims": [-1]}], "files": {"model.py": "model.py"}}
    graph = {"tokens": "lang/tokens.txt", "lexicon": "lang/lexicon.txt", "grammar": "lang/grammar.txt"}
    sections = (
        ({"asr_graph": graph}, {"assets": "kokoro-82m"})
        if old
        else ({"asr": {"graph": graph}}, {"tts": {"assets": "kokoro-82m"}})
    )
    reader = {**model,
              "files": {"model.py": "model.py", "TLG.fst": "model:decoder/TLG.fst",
                        "vocab.json": "model:speech/vocab.json"}}
    return {"version": 1,
            "models": {"decoder": {**model, **sections[0]}, "speech": {**model, **sections[1]}, "reader": reader}}


def _project(folder: Path, spec: dict) -> Path:
    folder.mkdir()
    (folder / "model.py").write_text("class TritonPythonModel:\n    pass\n")
    (folder / "tritonkit.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return folder / "tritonkit.yaml"


@pytest.mark.slow  # builds or inits through the CLI: seconds
def test_old_spellings_read_as_the_new_ones_with_one_warning_line_each(tmp_path: Path) -> None:
    old, new = _project(tmp_path / "old", _spec(old=True)), _project(tmp_path / "new", _spec(old=False))
    assert load_project(old).models == load_project(new).models
    done = run_cli("build", "--dry-run", cwd=old.parent)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "warning: tritonkit.yaml: models.decoder.asr_graph: 'asr_graph' is the old spelling of 'asr.graph' (read as "
        "that); write asr: {graph: ...}",
        "warning: tritonkit.yaml: models.speech.assets: 'assets' is the old spelling of 'tts.assets' (read as that); "
        "write tts: {assets: ...}"]
    assert (
        "reader: would copy TLG.fst (model:decoder/TLG.fst), vocab.json (model:speech/vocab.json)"
        in done.stdout.splitlines()
    )
    assert run_cli("build", "--dry-run", cwd=new.parent).stderr == ""


@pytest.mark.slow  # a build through the CLI: seconds
def test_both_spellings_at_once_are_refused_in_one_line(tmp_path: Path) -> None:
    spec = _spec(old=False)
    spec["models"]["decoder"]["asr_graph"] = spec["models"]["decoder"]["asr"]["graph"]
    done = run_cli("build", "--dry-run", cwd=_project(tmp_path / "p", spec).parent)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith("tritonkit.yaml: models.decoder.asr_graph: unknown key 'asr_graph'; remove it (known keys: "
                           "asr, ")
