"""`tritonkit init --pipeline llm --model PATH`: the LLM starter turned to serve the user's own checkpoint.

The starter's spec is edited line by line where it names the tiny GPT (its header, `source:`, the export's
settings, `quantize:`), keeping every other line and comment; each edit must find its one anchor, so a starter
changed out from under it fails loudly instead of writing a half-edited spec. The assets (tokenizer.json,
generation.json) are written from the checkpoint, as `python -m tritonkit.pipelines.llm.export.hf` rewrites them.
A checkpoint outside the project is hard-linked into it (no second copy on the same file system): the spec's
paths stay inside the project folder.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from tritonkit.errors import TritonkitError, shown_path

SPEC = "tritonkit.yaml"
MODEL_DIR = "model"   # where a model from outside the project is placed
HEADER = """\
# The LLM pipeline on {name} ({path}), written by `tritonkit init --pipeline llm --model`.
#   tritonkit build && tritonkit serve --background && tritonkit smoke   # needs tritonkit[export,llm]
#   tritonkit gateway   # OpenAI-compatible /v1/chat/completions and /v1/completions
# assets/ (tokenizer.json, generation.json: end tokens, context, chat format) was written from the model; rewrite it
# after changing the model with
#   python -m tritonkit.pipelines.llm.export.hf {path} assets
# Served float32 (quantize: none, below); docs/pipelines/own-model.md says how to quantize it with a quality gate.
"""
SOURCE = """\
      python: tritonkit.pipelines.llm.export.hf:build   # a Hugging Face folder or a GGUF file (its family's wrapper)
      kwargs: {{model: {path}}}
      weights: [{path}]   # hashed for the export cache: a changed checkpoint re-exports
"""
EXPORT = """\
      external_data: always   # weights in model.onnx.data: past ONNX's 2 GiB file limit, and read without a copy
      # Verification feeds random N(0, 1) caches through every layer; float32 rounding then moves a deep model's logits
      # by a few hundredths (SmolLM2's 30 layers: up to ~0.02)
      tolerance: {atol: 5.0e-3, rtol: 5.0e-3, outputs: {logits: {atol: 0.05, rtol: 0.02}}}
      timeout_s: 3600   # a model of a few billion parameters traces, verifies and writes for many minutes
"""
QUANTIZE = """\
      # float32, as trained. Quantized weights (int4 or int8) are smaller and faster, and measured against this float
      # graph at build; bounds refuse a build that loses too much (docs/pipelines/own-model.md):
      #   quantize: {weights: int4, lm: {tokenizer: assets/tokenizer.json, min_greedy_agreement: 0.9,
      #              max_perplexity_ratio: 1.05, max_task_accuracy_drop: 0.02, min_chat_greedy_agreement: 0.9}}
      quantize: none
"""


def check(model: Path) -> None:
    """Refuses, in one line naming its architecture and the supported ones, a model the pipeline cannot serve."""
    from tritonkit.pipelines.llm.export import hf

    try:
        hf.architecture(model)
    except hf.UnsupportedModel as exc:
        raise TritonkitError(shown_path(model), "--model", str(exc).split(": ", 1)[-1],
                             "give a folder or GGUF file of a supported family (docs/pipelines/own-model.md)") from None


def write(root: Path, model: Path) -> list[Path]:
    """Points the starter written into `root` at `model` (checked; placed inside the project, where the spec's
    paths must lie) and writes its assets; returns the files written."""
    from tritonkit.pipelines.llm.export import hf

    placed = place(root, model)
    spec = root / SPEC
    spec.write_text(edit(spec.read_text(), placed.relative_to(root.resolve()).as_posix()))
    hf.write_assets(placed, root / "assets")
    return [root / "assets" / "tokenizer.json", root / "assets" / "generation.json"]


def place(root: Path, model: Path) -> Path:
    """The model inside the project: where it is if it lies there, else hard-linked (copied across file systems)
    into `model/` (a folder's files) or `model/<file>.gguf`."""
    resolved, project = model.resolve(), root.resolve()
    if resolved.is_relative_to(project):
        return resolved
    target = project / MODEL_DIR
    if resolved.is_file():
        target.mkdir(parents=True, exist_ok=True)
        _link(resolved, target / resolved.name)
        return target / resolved.name
    shutil.copytree(resolved, target, copy_function=_link, dirs_exist_ok=True)
    return target


def _link(source: str | Path, dest: str | Path) -> None:
    Path(dest).unlink(missing_ok=True)
    try:
        os.link(source, dest)
    except OSError:   # another file system, or one without hard links
        shutil.copy2(source, dest)


def edit(text: str, path: str) -> str:
    """The starter spec with the tiny GPT replaced by the checkpoint at `path` (as the spec names it)."""
    lines = text.splitlines(keepends=True)
    body = lines[next(i for i, line in enumerate(lines) if not line.startswith("#")):]
    name = Path(path).stem if path.endswith(".gguf") else Path(path).name
    out = HEADER.format(name=name, path=path) + "".join(body)
    tiny = "      python: tritonkit.pipelines.llm.export.tiny:build\n"
    out = _replace(out, tiny, SOURCE.format(path=json.dumps(path)))   # JSON strings are YAML scalars, any path
    out = _replace(out, "      exporter: torchscript\n", "      exporter: torchscript\n" + EXPORT)
    return _replace_quantize(out)


def _replace(text: str, anchor: str, new: str) -> str:
    if text.count(anchor) != 1:
        raise RuntimeError(f"the llm starter's spec no longer has exactly one {anchor.strip()!r} line to edit")
    return text.replace(anchor, new)


def _replace_quantize(text: str) -> str:
    """`quantize:` and its indented lines, and the comment lines right above it, become QUANTIZE."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line == "      quantize:\n"]
    if len(starts) != 1:
        raise RuntimeError("the llm starter's spec no longer has exactly one 'quantize:' block to edit")
    first = last = starts[0]
    while first > 0 and lines[first - 1].startswith("      #"):
        first -= 1
    while last + 1 < len(lines) and lines[last + 1].startswith("        "):
        last += 1
    return "".join(lines[:first]) + QUANTIZE + "".join(lines[last + 1:])
