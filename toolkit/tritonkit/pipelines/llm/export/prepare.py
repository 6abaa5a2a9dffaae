"""`python -m tritonkit.pipelines.llm.export.prepare {tiny,smollm2} OUT [--assets-only]`: a decoder folder.

`--assets-only` writes what `tritonkit build` cannot export: `tokenizer.json` and `generation.json` (end
tokens, context, chat format), which the example specs copy next to the decoder (examples/llm/*/assets/).
Without it, the decoder is also exported here with tritonkit's exporter (isolated child, verified against
PyTorch at several batch sizes and lengths, cached) into OUT/model.onnx + OUT/golden/: the same graph the
specs' `source:`/`export:` sections produce, for in-process use (unit tests, benchmarks/llm.py).
`--quantize int4|int8` quantizes the weights as the specs' `export.quantize` does (and measures it against the
float graph: greedy agreement, perplexity).
"""
import argparse
import hashlib
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tritonkit.pipelines.llm.export import kv_graph

ASSET_FILES = ("tokenizer.json", "generation.json")


@dataclass(frozen=True)
class Recipe:
    """How one model becomes a decoder folder."""

    source: Callable[[], dict[str, Any]]
    export: dict[str, Any]
    write_assets: Callable[[Path], None]
    max_batch_size: int = 8


def code_fingerprint() -> str:
    """Hash of this folder's wrapper code. The exporter's cache leaves modules inside the tritonkit package out
    of its manifest (it hashes only tritonkit/export/), so the recipes pass this to the entry points as a
    keyword argument, which puts it in the cache key: editing a wrapper re-exports."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _tiny_source() -> dict[str, Any]:
    return {"python": "tritonkit.pipelines.llm.export.tiny:build", "python_path": ["."],
            "kwargs": {"code": code_fingerprint()}}


def _smollm2_source() -> dict[str, Any]:
    from tritonkit.pipelines.llm.export import smollm2

    return {"python": "tritonkit.pipelines.llm.export.smollm2:build", "python_path": ["."],
            "kwargs": {"code": code_fingerprint()}, "weights": [str(smollm2.gguf_path())]}


def _tiny_assets(out: Path) -> None:
    from tritonkit.pipelines.llm.export import tiny

    tiny.write_assets(out)


def _smollm2_assets(out: Path) -> None:
    from tritonkit.pipelines.llm.export import smollm2

    smollm2.write_assets(out)


#: |quantized - PyTorch| on the verify cases: a check for gross errors only (shapes, dynamic dims, a broken graph).
#: Verify's random N(0, 1) caches are far from any real cache and amplify the quantization error (SmolLM2 int8:
#: keys/values up to 8.5 and logits 16 off, ~1 on real prompts); an LM's quality is measured against the float
#: graph (quantize.lm)
QUANTIZED_TOLERANCE = {"atol": 20.0, "rtol": 0.1, "outputs": {"logits": {"atol": 40.0, "rtol": 0.1}}}

RECIPES = {
    "tiny": Recipe(_tiny_source, kv_graph.export_options(), _tiny_assets),
    # Verification feeds random caches (N(0, 1) keys/values, random lengths) through 30 layers; float32
    # rounding then moves logits by up to ~0.02 (real caches: ~2e-5, see tests/llm). Shapes kept small.
    "smollm2": Recipe(_smollm2_source, kv_graph.export_options(
        atol=5e-3, rtol=5e-3, batch_sizes=[1, 3], golden=3, lengths={"seq": [1, 6], "past": [8, 13]},
        outputs={"logits": {"atol": 0.05, "rtol": 0.02}}), _smollm2_assets),
}


def _assets_stamp(name: str, source: dict[str, Any]) -> str:
    """What the assets depend on: the recipe's code and the weight files' sizes and mtimes."""
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256(name.encode())
    for path in sorted(here.glob("*.py")) + [here.parent / "runtime" / "chat.py"]:
        digest.update(path.read_bytes())
    for weight in source.get("weights", []):
        st = Path(weight).stat()
        digest.update(f"{weight}:{st.st_size}:{st.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def write_assets(name: str, out_dir: Path) -> Path:
    """tokenizer.json and generation.json for `name` in out_dir (skipped when up to date)."""
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp_path = out_dir / ".assets-stamp"
    stamp = _assets_stamp(name, RECIPES[name].source())
    complete = all((out_dir / f).is_file() for f in ASSET_FILES)
    if not complete or not stamp_path.is_file() or stamp_path.read_text() != stamp:
        RECIPES[name].write_assets(out_dir)
        stamp_path.write_text(stamp)
    return out_dir


def prepare(name: str, out_dir: Path, cache_dir: Path | None = None, progress: Any = None,
            quantize: str | None = None) -> dict[str, Any]:
    """Exports (or reuses from the cache) and writes the decoder folder; returns a summary dict.

    `quantize` (int4, int8): weight-only quantization with the specs' defaults, measured against the float graph."""
    from tritonkit.export import ExportJob, export_model
    from tritonkit.export.progress import SilentProgress
    from tritonkit.spec.export import SourceSpec
    from tritonkit.spec.schema import spec_schema

    recipe = RECIPES[name]
    out_dir = Path(out_dir).resolve()
    cache_dir = Path(cache_dir or Path.cwd() / ".tritonkit" / "cache" / "export")
    started = time.monotonic()
    write_assets(name, out_dir)
    export = dict(recipe.export)
    if quantize:
        export["quantize"] = {"weights": quantize, "lm": {"tokenizer": str(out_dir / "tokenizer.json")},
                              "tolerance": QUANTIZED_TOLERANCE}
        export["timeout_s"] = 1800
    job = ExportJob("decoder", SourceSpec.model_validate(recipe.source()), spec_schema().export.model_validate(export),
                    recipe.max_batch_size, Path.cwd(), f"llm recipe '{name}'")
    result = export_model(job, out_dir, out_dir / "golden", cache_dir, progress or SilentProgress())
    summary = {"model": name, "folder": str(out_dir), "exporter": result.exporter, "cache_hit": result.cache_hit,
               "max_errors": result.max_errors, "cases": result.cases, "files": [p.name for p in result.model_files],
               "inputs": result.inputs, "outputs": result.outputs, "quantized": result.quantized,
               "seconds": round(time.monotonic() - started, 1)}
    (out_dir / "prepare.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=sorted(RECIPES))
    parser.add_argument("out", type=Path, help="folder to write (model.onnx, tokenizer.json, generation.json, golden/)")
    parser.add_argument("--cache", type=Path, help="export cache [default: ./.tritonkit/cache/export]")
    parser.add_argument("--assets-only", action="store_true", help="write tokenizer.json and generation.json only")
    parser.add_argument("--quantize", choices=["int4", "int8"], help="weight-only quantized (default: float32)")
    args = parser.parse_args(argv)
    if args.assets_only:
        print(f"{args.model}: {write_assets(args.model, args.out)} (tokenizer.json, generation.json)")
        return 0
    from tritonkit.errors import TritonkitError
    from tritonkit.export.progress import StderrProgress

    try:
        summary = prepare(args.model, args.out, args.cache, StderrProgress(), args.quantize)
    except TritonkitError as exc:
        print(exc, file=sys.stderr)
        return 2
    worst = max((e.get("max_abs", 0.0) for e in summary["max_errors"].values()), default=0.0)
    made = "cache hit" if summary["cache_hit"] else "exported"
    print(f"{args.model}: {summary['folder']} ({summary['exporter']}, {made}, "
          f"max |onnx - torch| {worst:.2e}, {summary['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
