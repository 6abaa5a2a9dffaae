"""Resuming an interrupted run: Model Analyzer skips measurements its checkpoint already holds, which is only
right while the models and the way they are measured are the same. The key hashes both; a new key starts
afresh. Objectives and constraints are left out: they steer the search, not the measurements, so a run
with a new constraint reuses every point already measured.
"""
import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from tritonkit.tune.analyzer.config import VOLATILE_KEYS
from tritonkit.tune.layout import TuneDir


def _tree_digest(root: Path) -> str:
    """Content hash of a folder (names and bytes; not mtimes, which every rebuild changes)."""
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            path = Path(folder, name)
            digest.update(str(path.relative_to(root)).encode() + b"\0")
            with open(path, "rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
    return digest.hexdigest()


def resume_key(config: dict[str, Any], built_repository: Path) -> str:
    """Same key = same models and same search: the checkpoint's measurements still apply."""
    stable = {k: v for k, v in config.items() if k not in VOLATILE_KEYS and k not in ("objectives", "constraints")}
    text = json.dumps(stable, sort_keys=True, default=str) + _tree_digest(built_repository)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def prepare_resume(tune_dir: TuneDir, key: str) -> bool:
    """True when the checkpoint from an earlier run with the same key is kept (the run resumes);
    otherwise clears Model Analyzer's old checkpoint and results so they cannot mix with new ones."""
    previous = tune_dir.resume_key.read_text().strip() if tune_dir.resume_key.is_file() else None
    if previous == key and any(tune_dir.checkpoints.glob("*.ckpt")):  # none when the folder is missing
        return True
    for stale in (tune_dir.checkpoints, tune_dir.results, tune_dir.variants):
        shutil.rmtree(stale, ignore_errors=True)
    tune_dir.resume_key.parent.mkdir(parents=True, exist_ok=True)
    tune_dir.resume_key.write_text(key + "\n")
    return False
