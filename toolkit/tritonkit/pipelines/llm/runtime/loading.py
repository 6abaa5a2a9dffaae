"""Builds an `Engine` from a decoder folder and a model's config parameters (generate's, and the benchmarks')."""
from dataclasses import dataclass
from pathlib import Path

from . import assets
from .decoder import OnnxDecoder
from .engine import Engine
from .grammar import Grammars
from .kv_cache import KVCachePool
from .prefix_cache import PrefixCache
from .text import TextCodec

DEFAULT_BUDGET = 256 * 1024 * 1024
#: The prefix cache's share of kv_cache_bytes when `prefix_cache_bytes` is not given (32 MiB of 256: ~700
#: SmolLM2-135M positions, a few system prompts).
DEFAULT_PREFIX_SHARE = 8
#: Most tokens a generation drafts a step (speculative decoding, see engine.py).
DEFAULT_DRAFT_TOKENS = 7


@dataclass
class Loaded:
    """An engine ready to admit requests, the tokenizer, and the request defaults."""

    engine: Engine
    codec: TextCodec
    generation: assets.GenerationConfig
    default_max_tokens: int | None   # None: a request naming no max_tokens runs to its end or the context's


def load_engine(folder: str | Path, params: dict[str, str]) -> Loaded:
    """Parameters: kv_cache_bytes, max_context, max_tokens_limit, default_max_tokens, call_cost_tokens,
    max_streams, prefill_chunk_tokens, prefix_cache_bytes (0 = no prefix reuse), draft_tokens (0 = no speculative
    decoding), intra_op_thread_count, allow_spinning, spin_duration_us, huge_pages (all
    optional)."""
    folder = Path(folder)
    generation = assets.GenerationConfig.load(folder)
    spin_us = params.get("spin_duration_us", "").strip()
    decoder = OnnxDecoder(folder / assets.MODEL_FILE, assets.int_parameter(params, "intra_op_thread_count", 0),
                          spin=assets.bool_parameter(params, "allow_spinning", True),
                          spin_duration_us=int(spin_us) if spin_us else None,
                          huge_pages=assets.bool_parameter(params, "huge_pages", True))
    budget = assets.int_parameter(params, "kv_cache_bytes", DEFAULT_BUDGET)
    prefix_bytes = assets.int_parameter(params, "prefix_cache_bytes", budget // DEFAULT_PREFIX_SHARE)
    if not 0 <= prefix_bytes <= budget:
        raise ValueError(f"parameter prefix_cache_bytes ({prefix_bytes}) must be between 0 (no prefix reuse) and "
                         f"kv_cache_bytes ({budget}): the prefix cache lives inside the KV-cache budget")
    max_context = min(generation.max_context, assets.int_parameter(params, "max_context", generation.max_context))
    pool = KVCachePool(decoder.geometry, budget, PrefixCache(decoder.geometry, prefix_bytes) if prefix_bytes else None,
                       slot_positions=max_context)
    codec = TextCodec(folder / assets.TOKENIZER_FILE)
    limit = assets.int_parameter(params, "max_tokens_limit", max_context)
    engine = Engine(decoder, pool, generation.eos_token_ids, max_context, decode=codec.decode, max_tokens_limit=limit,
                    call_cost=assets.int_parameter(params, "call_cost_tokens", 32),
                    max_streams=assets.int_parameter(params, "max_streams", 0),
                    prefill_chunk=assets.int_parameter(params, "prefill_chunk_tokens", 0),
                    grammars=Grammars(codec.tokenizer.to_str(), decoder.vocab_size, generation.eos_token_ids),
                    draft_tokens=assets.int_parameter(params, "draft_tokens", DEFAULT_DRAFT_TOKENS))
    default = assets.int_parameter(params, "default_max_tokens", 0)   # 0: the rest of the context
    return Loaded(engine, codec, generation, min(default, limit) if default > 0 else None)
