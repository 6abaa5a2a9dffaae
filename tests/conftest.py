"""Shared fixtures: the repository root, a runner for the real `tritonkit` CLI, and `require`/`missing`."""
from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import pytest

from tritonkit.pipelines import registry

registry.install()   # the shipped pipelines, as the CLI runs with them (a test may install its own)
REPO_ROOT = Path(__file__).resolve().parents[1]
# server_marker: a test that starts Triton without `@pytest.mark.server` fails; module_marks: under -m, a module whose
# pytestmark deselects it is not imported; scoped_tmp: a fixture's mktemp folders go when its scope ends
pytest_plugins = ["tests.server_marker", "tests.module_marks", "tests.scoped_tmp"]


def missing(reason: str) -> NoReturn:
    """Skips for lack of an installable stack; fails under CI, where `.ci/run` installs everything.

    Not for what cannot be installed here (TensorRT, a GPU): those stay plain skips.
    """
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set: the install must provide it)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def require(module: str, hint: str) -> ModuleType:
    """`module` imported, else `missing(...)` with the install hint (pytest.importorskip that fails under CI)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        missing(f"needs {module}: {hint}")


def copy_example_project(dest: Path) -> Path:
    """A copy of the repository's example project (spec, pipeline specs, model sources) in `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO_ROOT / "tritonkit.yaml", dest)
    for folder in ("ensembles", "models", "examples"):
        if (REPO_ROOT / folder).is_dir():
            shutil.copytree(REPO_ROOT / folder, dest / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Runs `python -m tritonkit ARGS` as a user would, capturing its output."""
    return subprocess.run(
        [sys.executable, "-m", "tritonkit", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


@contextmanager
def background_server(project: Path) -> Iterator[dict]:
    """`tritonkit serve --background --json` in `project`: its summary while it runs, then `tritonkit stop`."""
    started = run_cli("serve", "--background", "--json", cwd=project, timeout=180)
    assert started.returncode == 0, started.stderr
    try:
        yield json.loads(started.stdout)
    finally:
        assert run_cli("stop", cwd=project).returncode == 0


@pytest.fixture(scope="session")
def smollm2_default(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """The SmolLM2 example as shipped (its default quantized weights), built once for the whole session: its
    export, quantization and LM measures take minutes. Yields the project folder and `build --json`'s summary;
    modules serve the folder's model_repository in turn and must not change it."""
    from examples.llm.project import write_project
    from tritonkit.export.progress import SilentProgress
    from tritonkit.pipelines.llm.export.prepare import write_assets
    from tritonkit.repository.build import build

    folder = tmp_path_factory.mktemp("smollm2-default")
    summary = build(write_project(folder, "smollm2", write_assets("smollm2", folder / "assets")),
                    progress=SilentProgress()).summary()
    return folder, summary
