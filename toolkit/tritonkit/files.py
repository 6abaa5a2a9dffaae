"""File primitives every command shares, kept light (standard library only) so that importing them adds nothing
to a command's start-up: content hashes, and whole-file writes a reader never sees half done."""
import hashlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Any


class Below:
    """A path below its owner's folder (attribute `base`), read as an attribute (`Below("logs", "run.log")`): a
    folder's layout as one table of names."""

    def __init__(self, *parts: str, base: str = "root") -> None:
        self.parts, self.base = parts, base

    def __get__(self, owner: Any, owner_type: type | None = None) -> Path:
        return getattr(owner, self.base).joinpath(*self.parts)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def umask() -> int:
    """The process's file-creation mask (read and put back: Python has no getter)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def created_mode(directory: bool = False) -> int:
    """The mode `open()` or `mkdir()` would give a new file or folder: what a container's other uid can read
    (mkstemp and mkdtemp make private 0600/0700 ones, which a Triton container running as uid 1000 cannot)."""
    return (0o777 if directory else 0o666) & ~umask()


def write_atomically(path: Path, data: bytes, tmp_prefix: str | None = None, mode: int | None = None) -> None:
    """Writes `path` through a temporary file in its folder renamed into place; the temporary file (named
    `tmp_prefix`... when given, so listings can skip it) is removed if the write fails. The file gets `mode`,
    else the mode of the file it replaces, else a new file's mode (set before the rename: never seen with the
    wrong mode; the temporary file's own 0600 would make a rewritten spec or a published file private)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        mode = stat.S_IMODE(path.stat().st_mode) if path.is_file() else created_mode()
    fd, tmp = tempfile.mkstemp(prefix=tmp_prefix or f".{path.name}.tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            os.fchmod(handle.fileno(), mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomically(path: Path, text: str, mode: int | None = None) -> None:
    write_atomically(path, text.encode("utf-8"), mode=mode)
