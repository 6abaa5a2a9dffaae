"""The asr pipeline's build step: the decoding graph a model declares with `asr: {graph: ...}`, from the cache.

Like an export, a graph is cached: the key hashes the input files' content, the options, the versions of
kaldifst/kaldilm/kaldingram and the graph builder's own source, so an unchanged graph is not rebuilt.
Layout: `.tritonkit/cache/asr_graph/<key>/` = TLG.fst, words.txt, tokens.txt, lexicon.txt, info.json;
an entry is written in a temporary folder and renamed into place, so a failed build leaves none behind.
"""
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from tritonkit.errors import TritonkitError
from tritonkit.export.cache import dist_version, key_of
from tritonkit.files import sha256_file
from tritonkit.package_files import resolve_spec_path
from tritonkit.pipelines.asr.graph import info as graph_info
from tritonkit.pipelines.asr.graph.info import GRAPH_FILES, GraphInfo
from tritonkit.pipelines.asr.spec import AsrGraphSpec
from tritonkit.plugin.contract import Made
from tritonkit.spec.loader import shown_path
from tritonkit.spec.project import Project

CACHE_FORMAT = 1
TOOLS = ("kaldifst", "kaldilm", "kaldingram")


def _builder_fingerprint() -> str:
    """Hash of the graph builder's source: a change to it invalidates cached graphs."""
    digest = hashlib.sha256()
    for path in sorted(Path(graph_info.__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _inputs(name: str, graph: AsrGraphSpec, project: Project) -> dict[str, Path]:
    """The graph's input files, resolved; a missing one is a located error."""
    origin = project.origin(name)
    resolved = {}
    for field, written in graph.named_paths().items():
        path = resolve_spec_path(written, origin.parent)
        if not path.is_file():
            raise TritonkitError(shown_path(origin), f"models.{name}.asr.graph.{field}",
                                 f"file '{written}' not found (looked in {shown_path(path)})",
                                 f"fix the path (relative to {shown_path(origin)})")
        resolved[field] = path
    return resolved


def graph_for(name: str, graph: AsrGraphSpec, project: Project) -> Made:
    """The model's graph from the cache, or built now and cached."""
    inputs = _inputs(name, graph, project)
    kind, _ = graph.lm
    payload = {
        "format": CACHE_FORMAT, "lm": kind, "ngram_order": graph.ngram_order if kind == "corpus" else None,
        "inputs": {field: sha256_file(path) for field, path in inputs.items()},
        "tools": {tool: dist_version(tool) for tool in TOOLS}, "builder": _builder_fingerprint(),
    }
    root = project.root / ".tritonkit" / "cache" / "asr_graph"
    entry = root / key_of(payload)
    info_file = entry / "info.json"
    if info_file.is_file() and all((entry / f).is_file() for f in GRAPH_FILES):
        return _made(name, entry, GraphInfo(**json.loads(info_file.read_text())), cache_hit=True)
    from tritonkit.pipelines.asr.graph.build import build_graph  # kaldifst & co. (the `asr` extra) only when building

    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{entry.name}-", dir=root))
    try:
        info = build_graph(inputs["tokens"], inputs["lexicon"], kind, inputs[kind], work, graph.ngram_order)
        (work / "info.json").write_text(json.dumps(info.to_dict(), indent=2) + "\n")
        shutil.rmtree(entry, ignore_errors=True)
        os.replace(work, entry)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return _made(name, entry, info, cache_hit=False)


def _made(name: str, folder: Path, info: GraphInfo, cache_hit: bool) -> Made:
    """The graph's files, what `build --json` reports of it and the line `tritonkit build` prints."""
    line = (f"graph {name}: TLG {info.states} states, {info.arcs} arcs ({info.lm}, {info.words} words, "
            f"{info.tokens} tokens){' from cache' if cache_hit else f', built in {info.seconds:.2f}s'}")
    report = {**info.to_dict(), "cache_hit": cache_hit, "folder": str(folder)}
    return Made({file: folder / file for file in GRAPH_FILES}, report, line)

