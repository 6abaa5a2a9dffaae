"""What the ASR Triton adapters share: the graph folder of a sibling model, decoder settings from config
parameters, and a transcript or a bad request as a response. Duck-typed (Triton's `pb_utils` is passed in), so it
is unit-testable."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from .decoder import DecoderConfig, Transcript


def parameters(model_config: dict[str, Any]) -> dict[str, str]:
    """A Triton model config's `parameters` (JSON form) as plain strings."""
    return {k: v.get("string_value", "") for k, v in model_config.get("parameters", {}).items()}


def graph_folder(model_dir: str | Path, sibling: str) -> Path:
    """`<repository>/<sibling>/<highest version>`, which must hold the TLG.fst the build made from `asr_graph:`."""
    root = Path(model_dir).parent / sibling
    versions = [int(p.name) for p in root.iterdir() if p.name.isdigit() and p.is_dir()] if root.is_dir() else []
    folder = root / str(max(versions, default=1))
    if not (folder / "TLG.fst").is_file():
        raise FileNotFoundError(f"{folder} has no TLG.fst: give the '{sibling}' model an asr_graph: section in the spec "
                                "(or set parameter graph_model to the model that has one)")
    return folder


def sibling_parameter(model_dir: str | Path, sibling: str, name: str) -> str:
    """A string parameter of the sibling model's config.pbtxt (text format; no protobuf in the backend's stub)."""
    config = Path(model_dir).parent / sibling / "config.pbtxt"
    text = config.read_text(encoding="utf-8") if config.is_file() else ""
    found = re.search(r'key:\s*"' + re.escape(name) + r'"\s*value\s*\{\s*string_value:\s*"([^"]*)"', text)
    if found is None:
        raise ValueError(f"{config} has no parameter '{name}': set it in the spec under models.{sibling}.parameters")
    return found.group(1)


def decoder_config(params: dict[str, str]) -> DecoderConfig:
    """beam, max_active, min_active, lattice_beam, frame_shift_s, subsampling from the config's parameters."""
    default = DecoderConfig()

    def number(name: str, kind: type, fallback: Any) -> Any:
        value = params.get(name, "").strip()
        return kind(float(value)) if value else fallback

    return DecoderConfig(beam=number("beam", float, default.beam), max_active=number("max_active", int, default.max_active),
                         min_active=number("min_active", int, default.min_active),
                         lattice_beam=number("lattice_beam", float, default.lattice_beam),
                         frame_shift_s=number("frame_shift_s", float, default.frame_shift_s),
                         subsampling=number("subsampling", int, default.subsampling))


def transcript_response(pb_utils: Any, transcript: Transcript) -> Any:
    """A request's TRANSCRIPT and WORDS, per-word times as JSON: [{"word": ..., "start_s": ..., "end_s": ...}, ...]."""
    words = json.dumps([{"word": w.word, "start_s": round(w.start_s, 3), "end_s": round(w.end_s, 3)} for w in transcript.words])
    return pb_utils.InferenceResponse([pb_utils.Tensor("TRANSCRIPT", np.array([[transcript.text]], dtype=object)),
                                       pb_utils.Tensor("WORDS", np.array([[words]], dtype=object))])


def invalid_arg(pb_utils: Any, problem: object) -> Any:
    """A request's error response for bad input (INVALID_ARG, HTTP 400): the client's to fix, not a server fault."""
    return pb_utils.InferenceResponse(error=pb_utils.TritonError(str(problem), pb_utils.TritonError.INVALID_ARG))
