"""What the ASR Triton adapters share: the model's own folder holding the graph, decoder settings from config
parameters, and a transcript or a bad request as a response. Duck-typed (Triton's `pb_utils` is passed in), so it
is unit-testable."""
import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np

from .decoder import DecoderConfig, Transcript


def parameters(model_config: dict[str, Any]) -> dict[str, str]:
    """A Triton model config's `parameters` (JSON form) as plain strings."""
    return {k: v.get("string_value", "") for k, v in model_config.get("parameters", {}).items()}


def own_folder(args: dict[str, str]) -> Path:
    """This model's version folder (`args` of `initialize`), which must hold the TLG.fst the build copied there.

    A model reads only its own folder: Triton reading an s3:// repository downloads each model into a folder of
    its own. The spec copies the graph from the model whose `asr_graph:` made it (files: model:acoustic/TLG.fst).
    """
    folder = Path(args["model_repository"]) / args["model_version"]
    if not (folder / "TLG.fst").is_file():
        raise FileNotFoundError(f"{folder} has no TLG.fst: copy the graph into this model in the spec "
                                "(files: {TLG.fst: model:acoustic/TLG.fst, words.txt: ..., tokens.txt: ..., "
                                "lexicon.txt: ...})")
    return folder


def required_parameter(params: dict[str, str], name: str) -> str:
    """A parameter this model's config must set (e.g. asr_stream's receptive_frames, copied from the acoustic model)."""
    value = params.get(name, "").strip()
    if not value:
        raise ValueError(f"parameter '{name}' is not set: give it in the spec (e.g. {name}: model:acoustic/{name})")
    return value


def decoder_config(params: dict[str, str]) -> DecoderConfig:
    """beam, max_active, min_active, lattice_beam, frame_shift_s, subsampling from the config's parameters."""
    kinds = {"beam": float, "max_active": int, "min_active": int, "lattice_beam": float, "frame_shift_s": float,
             "subsampling": int}
    given = {name: kind(float(params[name])) for name, kind in kinds.items() if params.get(name, "").strip()}
    return dataclasses.replace(DecoderConfig(), **given)


def transcript_response(pb_utils: Any, transcript: Transcript) -> Any:
    """A request's TRANSCRIPT and WORDS, per-word times as JSON: [{"word": ..., "start_s": ..., "end_s": ...}, ...]."""
    words = json.dumps([{"word": w.word, "start_s": round(w.start_s, 3), "end_s": round(w.end_s, 3)}
                        for w in transcript.words])
    return pb_utils.InferenceResponse([pb_utils.Tensor("TRANSCRIPT", np.array([[transcript.text]], dtype=object)),
                                       pb_utils.Tensor("WORDS", np.array([[words]], dtype=object))])


def invalid_arg(pb_utils: Any, problem: object) -> Any:
    """A request's error response for bad input (INVALID_ARG, HTTP 400): the client's to fix, not a server fault."""
    return pb_utils.InferenceResponse(error=pb_utils.TritonError(str(problem), pb_utils.TritonError.INVALID_ARG))
