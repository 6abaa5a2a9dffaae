"""Export cache: an export is skipped when everything that went into it hashes the same as last time.

Two levels, like a compiler cache's "direct mode": the key hashes what the parent knows without torch
(source and export options, max_batch_size, tool versions, every tritonkit module the export child runs,
source files); the entry's manifest lists what the child saw while building the model (project code
files, data and weight files it read, versions of packages it imported) and each is re-hashed on lookup.

Layout: `<cache root>/<key>/` = job.json, progress.jsonl, error.json, export.log, reproduce.sh, manifest.json,
artifacts/ (result.json, model files, golden/).
"""
import ast
import functools
import hashlib
import json
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from tritonkit.export.job import ExportOutcome, read
from tritonkit.files import Below, sha256_file, write_text_atomically
from tritonkit.plugin.host import SOURCE_ENV

CACHE_FORMAT = 1
TOOLS = ("torch", "onnx", "onnxruntime", "onnxscript", "numpy", "tensorrt", "torch_tensorrt")


def default_root(project_dir: Path) -> Path:
    """`<project>/.tritonkit/cache/export`."""
    return project_dir / ".tritonkit" / "cache" / "export"


def dist_version(name: str) -> str | None:
    """Installed version of a distribution, None when absent."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def tool_versions() -> dict[str, str | None]:
    """Versions of the exporters and runtimes, read from metadata (no import of torch)."""
    versions: dict[str, str | None] = {name: dist_version(name) for name in TOOLS}
    versions["python"] = ".".join(map(str, sys.version_info[:3]))
    return versions


CHILD_ENTRY = "tritonkit.export.child"


def _module_file(package_dir: Path, module: str) -> Path | None:
    """The source file of tritonkit module `module`, or None when it is not a tritonkit module."""
    parts = module.split(".")
    if parts[0] != "tritonkit":
        return None
    base = package_dir.joinpath(*parts[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _imported_names(path: Path, module: str) -> Iterator[str]:
    """Every module an `import` anywhere in the file may name (function-level imports included)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)  # `from pkg import submodule`


@functools.cache
def child_modules() -> tuple[Path, ...]:
    """Source files of every tritonkit module the export child may run: the import closure of its entry point.

    Read from the code rather than listed by hand, so a helper the exporter starts using (e.g.
    `tritonkit/golden.py`) is part of the cache key without anyone remembering to add it. The installed pipelines'
    registry, which the child imports by the name in its environment (their quantize checks), is followed too.
    """
    package_dir = Path(__file__).resolve().parents[1]
    found: dict[str, Path] = {}
    registry = os.environ.get(SOURCE_ENV, "").partition(":")[0]
    todo = [CHILD_ENTRY, *([registry] if registry else [])]
    while todo:
        module = todo.pop()
        path = None if module in found else _module_file(package_dir, module)
        if path is None:
            continue
        found[module] = path
        parents = module.split(".")
        todo += [".".join(parents[:i]) for i in range(1, len(parents))]  # importing a module runs its packages
        todo += _imported_names(path, module)
    return tuple(sorted(set(found.values())))


def code_fingerprint() -> str:
    """Hash of every tritonkit module the export child runs: a change to any of them invalidates entries."""
    package_dir = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in child_modules():
        digest.update(path.relative_to(package_dir).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def key_of(payload: dict[str, Any]) -> str:
    """The cache key: sha256 of the canonical JSON of `payload` (first 24 hex digits)."""
    text = json.dumps(payload, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def dep_unchanged(dep: dict[str, str]) -> bool:
    """Whether one manifest dependency still holds (file content or package version)."""
    if "file" in dep:
        path = Path(dep["file"])
        return path.is_file() and sha256_file(path) == dep["sha256"]
    return dist_version(dep["dist"]) == dep["version"]


@dataclass
class Entry:
    """One cache slot, named by its key; the export child is given its job.json and finds the other files by name."""

    key: str
    dir: Path
    artifacts = Below("artifacts", base="dir")

    def file(self, name: str) -> Path:
        """`job.json`, `manifest.json`, `progress.jsonl`, `error.json`, `export.log`; `result.json` is in artifacts/."""
        return (self.artifacts if name == "result.json" else self.dir) / name

    def result(self) -> ExportOutcome:
        """The child's result.json."""
        return read(ExportOutcome, self.file("result.json"))


class ExportCache:
    """The cache under one root directory."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def entry(self, key: str) -> Entry:
        return Entry(key, self.root / key)

    def lookup(self, key: str) -> Entry | None:
        """The committed entry for `key` when every recorded dependency is unchanged, else None."""
        entry = self.entry(key)
        try:
            manifest = json.loads(entry.file("manifest.json").read_text())
        except (OSError, ValueError):
            return None
        whole = manifest.get("format") == CACHE_FORMAT and entry.file("result.json").is_file()
        return entry if whole and all(dep_unchanged(dep) for dep in manifest.get("deps", [])) else None

    def prepare(self, key: str) -> Entry:
        """An empty slot for a fresh export (an old manifest and artifacts are removed first)."""
        entry = self.entry(key)
        for name in ("manifest.json", "error.json", "progress.jsonl"):  # the manifest first: no hit from here on
            entry.file(name).unlink(missing_ok=True)
        shutil.rmtree(entry.artifacts, ignore_errors=True)
        entry.artifacts.mkdir(parents=True, exist_ok=True)
        return entry

    def commit(self, entry: Entry, payload: dict[str, Any], deps: list[dict[str, str]]) -> None:
        """Writes manifest.json last and atomically: an entry without it is never a hit."""
        manifest = {"format": CACHE_FORMAT, "key": entry.key, "payload": payload, "deps": deps}
        text = json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n"
        write_text_atomically(entry.file("manifest.json"), text)
