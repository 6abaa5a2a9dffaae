"""Builds an `Engine` from a decoder folder and a model's config parameters (generate's, and the benchmarks')."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import assets
from .decoder import OnnxDecoder
from .engine import Engine
from .kv_cache import KVCachePool
from .text import TextCodec

DEFAULT_BUDGET = 256 * 1024 * 1024


@dataclass
class Loaded:
    """An engine ready to admit requests, the tokenizer, and the request defaults."""

    engine: Engine
    codec: TextCodec
    generation: assets.GenerationConfig
    default_max_tokens: int


def load_engine(folder: str | Path, params: dict[str, str]) -> Loaded:
    """Parameters: kv_cache_bytes, max_context, max_tokens_limit, default_max_tokens, call_cost_tokens,
    max_streams, prefill_chunk_tokens, intra_op_thread_count, allow_spinning (all optional)."""
    folder = Path(folder)
    generation = assets.GenerationConfig.load(folder)
    decoder = OnnxDecoder(folder / assets.MODEL_FILE, assets.int_parameter(params, "intra_op_thread_count", 0),
                          spin=params.get("allow_spinning", "1").strip().lower() not in ("0", "false"))
    pool = KVCachePool(decoder.geometry, assets.int_parameter(params, "kv_cache_bytes", DEFAULT_BUDGET))
    codec = TextCodec(folder / assets.TOKENIZER_FILE)
    max_context = min(generation.max_context, assets.int_parameter(params, "max_context", generation.max_context))
    limit = assets.int_parameter(params, "max_tokens_limit", max_context)
    engine = Engine(decoder, pool, generation.eos_token_ids, max_context, decode=codec.decode, max_tokens_limit=limit,
                    call_cost=assets.int_parameter(params, "call_cost_tokens", 32),
                    max_streams=assets.int_parameter(params, "max_streams", 0),
                    prefill_chunk=assets.int_parameter(params, "prefill_chunk_tokens", 0))
    return Loaded(engine, codec, generation, min(assets.int_parameter(params, "default_max_tokens", 64), limit))
