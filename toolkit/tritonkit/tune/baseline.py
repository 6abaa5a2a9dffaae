"""Builds the models to profile from the spec *without* its `tuned:` overlay, into the tuning directory.

Model Analyzer's "default" configuration must be the user's own settings, not an earlier run's winner, so
the spec is copied beside itself (relative paths and includes keep working) with `tuned:` removed, built
with tritonkit's own builder, and pruned to the models being tuned.
"""
import shutil
from pathlib import Path

import yaml

from tritonkit.repository.build import build
from tritonkit.spec.loader import load_project
from tritonkit.spec.project import Project
from tritonkit.tune.layout import TuneDir


def _without_tuned(text: str) -> str:
    data = yaml.safe_load(text) or {}
    if "tuned" not in data:
        return text
    data.pop("tuned")
    return yaml.safe_dump(data, sort_keys=False)


def build_baseline(spec_path: Path, tune_dir: TuneDir, models: tuple[str, ...]) -> Project:
    """Builds the untuned models into `tune_dir.built` (only `models` are kept); returns the untuned project."""
    spec_path = spec_path.absolute()
    # A stable name: it appears in the built configs' header, which the resume key hashes.
    temp = spec_path.with_name(f".{spec_path.stem}.tune-{tune_dir.root.name}{spec_path.suffix}")
    temp.write_text(_without_tuned(spec_path.read_text(encoding="utf-8")), encoding="utf-8")
    try:
        project = load_project(temp)
        build(temp, out_dir=tune_dir.built, compose_path=tune_dir.root / "docker-compose.yml")
    finally:
        temp.unlink(missing_ok=True)
    for entry in tune_dir.built.iterdir():
        if entry.is_dir() and entry.name not in models:
            shutil.rmtree(entry)
    project.spec_path = spec_path
    project.origins = {name: spec_path if origin == temp else origin for name, origin in project.origins.items()}
    return project
