"""Writes files atomically: build into a temporary sibling, then swap it in, so failures leave the old output."""
import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tritonkit.errors import TritonkitError, shown_path
from tritonkit.files import created_mode
from tritonkit.golden import write_cases
from tritonkit.repository.plan import BuildPlan

REPOSITORY_README = """# model_repository (build output)

Written by `tritonkit build` from the spec file; every run replaces this folder whole.
Do not edit it by hand: change `tritonkit.yaml` (or the pipeline specs in `ensembles/`) and rebuild.
"""


def write_repository(plan: BuildPlan, out_dir: Path) -> None:
    """Writes the planned repository to `out_dir`, replacing any previous one only once complete."""
    out_dir = out_dir.absolute()
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    try:
        staging.chmod(created_mode(directory=True))   # mkdtemp's 0700 would hide the repository from a container's uid
        (staging / "README.md").write_text(REPOSITORY_README, encoding="utf-8")
        for name, model in plan.models.items():
            model_dir = staging / name
            for version in plan.project.models[name].versions:
                (model_dir / str(version)).mkdir(parents=True, exist_ok=True)
            (model_dir / "config.pbtxt").write_text(model.config_text, encoding="utf-8")
            for rel, src in model.copies.items():
                dest = model_dir / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest)
            if model.golden:
                write_cases(model_dir / "golden", model.golden)
        swap_in(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


@contextmanager
def reported_write(target: Path, kept: str) -> Iterator[None]:
    """Turns a failed write (disk full, file too large, read-only folder) into one line naming the file,
    the reason and what was kept."""
    try:
        yield
    except OSError as exc:
        where = shown_path(Path(exc.filename)) if exc.filename else shown_path(target)
        reason = exc.strerror or str(exc)
        name = errno.errorcode.get(exc.errno or 0, "")
        raise TritonkitError(where, "", f"cannot write {shown_path(target)}: {reason}" + (f" ({name})" if name else ""),
                             f"free disk space or make the folder writable, then build again; {kept}") from None


def swap_in(staging: Path, target: Path) -> None:
    """Replaces `target` with `staging` using renames, keeping the old tree until the new one is in place."""
    if not target.exists():
        staging.rename(target)
        return
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    target.rename(old)
    try:
        staging.rename(target)
    except BaseException:
        old.rename(target)
        raise
    shutil.rmtree(old, ignore_errors=True)
