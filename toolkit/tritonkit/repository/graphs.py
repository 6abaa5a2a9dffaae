"""Builds the decoding graphs that models declare with `asr_graph:` and adds their files to those models.

Like an export, a graph is cached: the key hashes the input files' content, the options, the versions of
kaldifst/kaldilm/kaldingram and the graph builder's own source, so an unchanged graph is not rebuilt.
Layout: `.tritonkit/cache/asr_graph/<key>/` = TLG.fst, words.txt, tokens.txt, lexicon.txt, info.json;
an entry is written in a temporary folder and renamed into place, so a failed build leaves none behind.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tritonkit.errors import TritonkitError
from tritonkit.export.cache import dist_version, key_of
from tritonkit.files import sha256_file
from tritonkit.package_files import resolve_spec_path
from tritonkit.pipelines.asr.graph import info as graph_info
from tritonkit.pipelines.asr.graph.info import GRAPH_FILES, GraphInfo
from tritonkit.spec.loader import shown_path
from tritonkit.spec.model import ModelSpec
from tritonkit.spec.project import Project

CACHE_FORMAT = 1
TOOLS = ("kaldifst", "kaldilm", "kaldingram")


@dataclass(frozen=True)
class GraphResult:
    """One model's graph: where its files are, its sizes, and whether the cache had it."""

    folder: Path
    info: GraphInfo
    cache_hit: bool

    def summary(self) -> dict[str, object]:
        return {**self.info.to_dict(), "cache_hit": self.cache_hit, "folder": str(self.folder)}


def _builder_fingerprint() -> str:
    """Hash of the graph builder's source: a change to it invalidates cached graphs."""
    digest = hashlib.sha256()
    for path in sorted(Path(graph_info.__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _inputs(name: str, spec: ModelSpec, project: Project) -> dict[str, Path]:
    """The graph's input files, resolved; a missing one is a located error."""
    assert spec.asr_graph is not None
    origin = project.origin(name)
    resolved = {}
    for field, written in spec.asr_graph.named_paths().items():
        path = resolve_spec_path(written, origin.parent)
        if not path.is_file():
            raise TritonkitError(shown_path(origin), f"models.{name}.asr_graph.{field}", f"file '{written}' not found (looked in {shown_path(path)})",
                                 f"fix the path (relative to {shown_path(origin)})")
        resolved[field] = path
    return resolved


def graph_for(name: str, spec: ModelSpec, project: Project) -> GraphResult:
    """The model's graph from the cache, or built now and cached."""
    assert spec.asr_graph is not None
    inputs = _inputs(name, spec, project)
    kind, _ = spec.asr_graph.lm
    payload = {
        "format": CACHE_FORMAT, "lm": kind, "ngram_order": spec.asr_graph.ngram_order if kind == "corpus" else None,
        "inputs": {field: sha256_file(path) for field, path in inputs.items()},
        "tools": {tool: dist_version(tool) for tool in TOOLS}, "builder": _builder_fingerprint(),
    }
    root = project.root / ".tritonkit" / "cache" / "asr_graph"
    entry = root / key_of(payload)
    info_file = entry / "info.json"
    if info_file.is_file() and all((entry / f).is_file() for f in GRAPH_FILES):
        return GraphResult(entry, GraphInfo(**json.loads(info_file.read_text())), cache_hit=True)
    from tritonkit.pipelines.asr.graph.build import build_graph  # kaldifst & co. (the `asr` extra) only when a graph is built

    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{entry.name}-", dir=root))
    try:
        info = build_graph(inputs["tokens"], inputs["lexicon"], kind, inputs[kind], work, spec.asr_graph.ngram_order)
        (work / "info.json").write_text(json.dumps(info.to_dict(), indent=2) + "\n")
        shutil.rmtree(entry, ignore_errors=True)
        os.replace(work, entry)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return GraphResult(entry, info, cache_hit=False)


def run_graphs(project: Project) -> dict[str, GraphResult]:
    """Builds (or finds) every declared graph and adds its files to the model's `files` (the spec's own win)."""
    results: dict[str, GraphResult] = {}
    for name, spec in list(project.models.items()):
        if spec.asr_graph is None:
            continue
        result = graph_for(name, spec, project)
        files = {**{f: str(result.folder / f) for f in GRAPH_FILES}, **spec.files}
        project.models[name] = ModelSpec.model_validate({**spec.model_dump(by_alias=True), "files": files})
        results[name] = result
    return results
