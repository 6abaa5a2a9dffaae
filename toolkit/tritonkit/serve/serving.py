"""Writes the serving directory the embedded server loads: fallbacks generated, everything else linked.

The directory name is a hash of the source repository's path, its file list (names, sizes, mtimes), the
fallback code and the options, so an unchanged repository reuses its directory and a server still
running on an older one is never pulled out from under it.
"""
import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import text_format

from tritonkit.errors import TritonkitError
from tritonkit.serve.fallback import ADAPTER, RUNNER, RUNNER_MODULE_FILE, Fallback, fallback_config, gpu_available, plan
from tritonkit.triton.layout import version_dirs


@dataclass(frozen=True)
class ServingRepository:
    """The directory to hand to tritonserver, and which models in it are fallbacks."""

    source: Path
    path: Path
    fallbacks: tuple[Fallback, ...] = ()


#: Entries of a fallback model's folder that are replaced rather than linked.
_REPLACED = frozenset({"config.pbtxt", "configs"})


def _fingerprint(repository: Path, fallbacks: list[Fallback], gpu: bool) -> str:
    digest = hashlib.sha256(str(repository.resolve()).encode())
    for root, dirs, files in os.walk(repository):
        dirs.sort()
        for name in sorted(files):
            path = Path(root, name)
            try:
                st = path.stat()
            except OSError:
                continue
            digest.update(f"{path.relative_to(repository)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    for code in (ADAPTER, RUNNER):
        digest.update(code.read_bytes())
    digest.update(repr((sorted(map(repr, fallbacks)), gpu)).encode())
    return digest.hexdigest()[:16]


def _mirror(source: Path, target: Path, skip: frozenset[str] = frozenset()) -> None:
    """Real folders holding symlinked files: Python writes its `__pycache__` here, not into the source.

    (The Python-backend stub runs an isolated interpreter that ignores PYTHONDONTWRITEBYTECODE.)
    """
    target.mkdir()
    for entry in sorted(source.iterdir()):
        if entry.name in skip or entry.name == "__pycache__":
            continue
        if entry.is_dir():
            _mirror(entry, target / entry.name)
        else:
            (target / entry.name).symlink_to(entry.resolve())


def _write_fallback(model_dir: Path, target: Path, config_text: str) -> None:
    """The model's own files, its config swapped for the Python-backend one, the adapter in each version."""
    _mirror(model_dir, target, skip=_REPLACED)
    (target / "config.pbtxt").write_text(config_text)
    for version in version_dirs(model_dir):
        for name, code in (("model.py", ADAPTER), (RUNNER_MODULE_FILE, RUNNER)):
            (target / version.name / name).unlink(missing_ok=True)
            shutil.copyfile(code, target / version.name / name)


def _prune(serving_root: Path, keep: int = 8) -> None:
    """Drops all but the newest serving folders (they are small, but every change makes one)."""
    folders = sorted((p for p in serving_root.iterdir() if p.is_dir() and not p.name.startswith(".")),
                     key=lambda p: p.stat().st_mtime, reverse=True)
    for old in folders[keep:]:
        shutil.rmtree(old, ignore_errors=True)


def build_serving_repository(repository: Path, work_dir: Path, *, threads: int | None = None,
                             gpu: bool | None = None) -> ServingRepository:
    """The serving directory for `repository` (reused while the repository is unchanged).

    Raises one error listing every model the embedded server cannot run at all.
    """
    repository = Path(repository)
    if not repository.is_dir():
        raise TritonkitError(str(repository), "", "model repository not found",
                             "build it first (tritonkit build) or pass its path: tritonkit serve DIR")
    planned, problems = plan(repository, threads)
    if problems:
        raise TritonkitError.of(problems)
    gpu = gpu_available() if gpu is None else gpu
    fallbacks = [fb for _, fb in planned.values()]
    target = work_dir / "serving" / _fingerprint(repository, fallbacks, gpu)
    if not target.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
        try:
            for model_dir in sorted(p for p in repository.iterdir() if p.is_dir()):
                if model_dir.name in planned:
                    config, fallback = planned[model_dir.name]
                    text = text_format.MessageToString(fallback_config(config, fallback, gpu))
                    _write_fallback(model_dir, tmp / model_dir.name, text)
                else:
                    _mirror(model_dir, tmp / model_dir.name)
            tmp.chmod(0o755)  # mkdtemp makes it private; the server may run as another user (containers)
            try:
                os.replace(tmp, target)
            except OSError:
                if not target.is_dir():  # not another process having written the same content
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    os.utime(target)  # marks it the newest, so pruning keeps it
    _prune(target.parent)
    return ServingRepository(source=repository, path=target, fallbacks=tuple(fallbacks))
