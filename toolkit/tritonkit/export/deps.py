"""Records what building a model read: project code, data/weight files, imported packages (for the cache).

Runs inside the export child. Python's audit hook sees every `open()` (torch.load, json, pickle...); the modules
imported during the build give the code files; packages imported from site-packages are recorded by distribution
version. Files read by native code only (e.g. safetensors' Rust loader) are invisible here: the spec's `source.weights`
names them (hashed by the parent), and files shipped in a package are covered by the package's version.
"""
from __future__ import annotations

import os
import site
import sys
import sysconfig
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from types import ModuleType

from tritonkit.export.cache import dist_version
from tritonkit.files import sha256_file

_CODE_SUFFIXES = {".py", ".pyc", ".pyi", ".so", ".pyd", ".pth"}
_opened: list[str] = []
_recording = False
_hook_installed = False


def _audit(event: str, args: tuple) -> None:
    """Audit hook: remembers paths opened for reading while recording."""
    if not _recording or event != "open" or not args:
        return
    path, mode = args[0], args[1] if len(args) > 1 else None
    flags = args[2] if len(args) > 2 else 0
    if not isinstance(path, (str, bytes, os.PathLike)):
        return
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return
    if mode is None and isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR):
        return
    _opened.append(os.fsdecode(path))


def _roots() -> tuple[list[str], list[str]]:
    """(stdlib roots, site-packages roots) as resolved path prefixes."""
    paths = sysconfig.get_paths()
    stdlib = {paths["stdlib"], paths["platstdlib"]}
    sites = {paths["purelib"], paths["platlib"], *site.getsitepackages()}
    if site.ENABLE_USER_SITE:
        sites.add(site.getusersitepackages())
    resolve = lambda ps: sorted({str(Path(p).resolve()) + os.sep for p in ps if p})  # noqa: E731
    return resolve(stdlib), resolve(sites)


class Recorder:
    """Context manager: `with Recorder() as rec: build()` then `rec.deps()`."""

    def __enter__(self) -> Recorder:
        global _recording, _hook_installed
        if not _hook_installed:
            sys.addaudithook(_audit)
            _hook_installed = True
        self._modules_before = set(sys.modules)
        _opened.clear()
        _recording = True
        return self

    def __exit__(self, *exc: object) -> None:
        global _recording
        _recording = False
        self.opened = list(_opened)
        new = set(sys.modules) - self._modules_before
        self.modules: list[ModuleType] = [sys.modules[m] for m in new if m in sys.modules]

    def deps(self, extra_files: Sequence[Path] = ()) -> list[dict[str, str]]:
        """Manifest entries: {"file", "sha256"} for files read, {"dist", "version"} for packages imported."""
        stdlib, sites = _roots()
        own = str(Path(__file__).resolve().parent) + os.sep  # the exporter itself: in the cache key (code_fingerprint)
        files: set[str] = {str(Path(p).resolve()) for p in extra_files}
        top_level: set[str] = set()
        for module in self.modules:
            origin = getattr(module, "__file__", None)
            if not origin:
                continue
            path = str(Path(origin).resolve())
            if any(path.startswith(r) for r in sites):
                top_level.add(module.__name__.split(".")[0])
            elif not any(path.startswith(r) for r in stdlib) and not path.startswith(own):
                files.add(path)  # project code
        for raw in self.opened:
            opened = Path(raw).resolve()
            text = str(opened)
            in_stdlib = any(text.startswith(r) for r in stdlib) and not any(text.startswith(r) for r in sites)
            if not opened.is_file() or text.startswith(("/proc/", "/sys/", "/dev/")) or in_stdlib:
                continue
            if opened.suffix in _CODE_SUFFIXES or ".dist-info" in text or ".egg-info" in text or text.startswith(own):
                continue  # code is tracked through imported modules; metadata through package versions
            files.add(text)
        deps = [{"file": f, "sha256": sha256_file(Path(f))} for f in sorted(files) if Path(f).is_file()]
        return deps + dist_deps(top_level)


def dist_deps(top_level: set[str]) -> list[dict[str, str]]:
    """{"dist", "version"} entries for the distributions that provide the given top-level modules."""
    mapping = metadata.packages_distributions()
    names = sorted({d for name in top_level for d in mapping.get(name, [])})
    return [{"dist": n, "version": v} for n in names if (v := dist_version(n)) is not None]
