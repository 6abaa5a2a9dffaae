"""Whether a decoder's greedy text depends on the prompt alone: each prompt continued the ways a server runs it,
compared token for token with the prompt run alone from a cold cache.

The ways (`WAYS`), all through the engine (`runtime.engine.Engine`) on the decoder folder: `batch`, the prompts
`batch` at a time, prefilled in one call and decoded together; `reversed`, the same with the rows in the other
order; `chunked`, at once with the prompts prefilled `CHUNK` tokens a step between the others' decode steps;
`in_flight`, each admitted a few steps after the one before, while those decode; `warm_cache`, alone again after
the prompt ran once, its start copied from the prefix cache; `drafted` and `drafted_batch`, alone and `batch` at a
time with speculative decoding (up to `DRAFT` drafted tokens verified a step; a graph that cannot verify drafts runs
them without). Seeded sampling is compared the same way (`params`).
The build reports the fraction (`export.quantize.lm`), the tests and `benchmarks/llm_quality.py` assert it.
"""
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from tritonkit.pipelines.llm.runtime.engine import Engine
    from tritonkit.pipelines.llm.runtime.sampling import SamplingParams

WAYS = ("batch", "reversed", "chunked", "in_flight", "warm_cache", "drafted", "drafted_batch")
#: Prompt tokens a step in the `chunked` way: odd, so chunks of every size down to one token come up.
CHUNK = 5
#: Steps between two admissions in the `in_flight` way.
STAGGER = 3
#: Most drafted tokens a generation verifies a step in the `drafted` ways.
DRAFT = 5


@dataclass
class Invariance:
    """Each prompt's generated ids alone and in each way, and the drafted tokens the `drafted` ways verified and
    accepted (speculation that never drafted would prove nothing)."""

    alone: list[list[int]]
    ways: dict[str, list[list[int]]]
    drafted: int = 0
    accepted: int = 0

    def invariant(self) -> list[bool]:
        """Per prompt: its text is the same every way."""
        return [all(self.ways[w][i] == ids for w in self.ways) for i, ids in enumerate(self.alone)]

    @property
    def fraction(self) -> float:
        """Prompts whose text is the same every way, of all."""
        same = self.invariant()
        return sum(same) / len(same) if same else 1.0

    def differing(self) -> dict[str, list[int]]:
        """Per way, the prompts whose text differs from alone."""
        return {w: [i for i, ids in enumerate(self.alone) if got[i] != ids] for w, got in self.ways.items()}


def measure(folder: Path, prompts: Sequence[np.ndarray], max_tokens: int = 32, batch: int = 8,
            params: "SamplingParams | None" = None) -> Invariance:
    """Runs every prompt alone and every way on the decoder in `folder` (model.onnx, tokenizer.json,
    generation.json); `params` default: greedy, `max_tokens`, end tokens ignored (every prompt runs as long)."""
    from tritonkit.pipelines.llm.runtime.kv_cache import KVCachePool
    from tritonkit.pipelines.llm.runtime.loading import load_engine
    from tritonkit.pipelines.llm.runtime.prefix_cache import PrefixCache
    from tritonkit.pipelines.llm.runtime.sampling import SamplingParams

    params = params or SamplingParams(max_tokens=max_tokens, ignore_eos=True)
    engine = load_engine(folder, {"prefix_cache_bytes": "0", "prefill_chunk_tokens": "0", "draft_tokens": "0"}).engine
    requests: dict[Hashable, tuple[Sequence[int], SamplingParams]] = {
        i: ([int(t) for t in p], params) for i, p in enumerate(prompts)}
    groups = [list(requests)[i:i + batch] for i in range(0, len(requests), batch)]

    def together(keys: Sequence[Hashable]) -> dict[Hashable, list[int]]:
        return {k: out.generated for k, out in engine.run({k: requests[k] for k in keys}).items()}

    def ordered(results: dict[Hashable, list[int]]) -> list[list[int]]:
        return [results[k] for k in requests]

    alone = ordered({k: v for k in requests for k, v in together([k]).items()})
    ways = {"batch": ordered({k: v for g in groups for k, v in together(g).items()}),
            "reversed": ordered({k: v for g in groups for k, v in together(g[::-1]).items()})}
    engine.prefill_chunk = CHUNK
    ways["chunked"] = ordered({k: v for g in groups for k, v in together(g).items()})
    ways["in_flight"] = ordered({k: v for g in groups for k, v in _staggered(engine, g, requests).items()})
    engine.prefill_chunk = 0
    pool = engine.pool
    engine.pool = KVCachePool(pool.geometry, pool.budget_bytes, PrefixCache(pool.geometry, pool.budget_bytes // 4),
                              slot_positions=pool.slot_positions)
    for k in requests:
        together([k])  # fills the prefix cache
    ways["warm_cache"] = ordered({k: v for k in requests for k, v in together([k]).items()})
    engine.pool = pool
    engine.draft_tokens = DRAFT if engine.decoder.verifies else 0
    ways["drafted"] = ordered({k: v for k in requests for k, v in together([k]).items()})
    ways["drafted_batch"] = ordered({k: v for g in groups for k, v in together(g).items()})
    return Invariance(alone, ways, engine.drafted_tokens, engine.accepted_tokens)


def _staggered(engine: "Engine", keys: Sequence[Hashable],
               requests: dict[Hashable, "tuple[Sequence[int], SamplingParams]"]) -> dict[Hashable, list[int]]:
    """Admits the requests one every `STAGGER` steps while the earlier ones run; steps until all finish."""
    waiting, step = list(keys), 0
    results: dict[Hashable, list[int]] = {}
    while waiting or any(k in engine for k in keys):
        if waiting and step % STAGGER == 0:
            key = waiting.pop(0)
            engine.admit(key, *requests[key])
        live = [k for k in keys if k in engine]
        for out in engine.step(live) if live else []:
            if out.finish_reason is not None:
                results[out.key] = out.generated
        step += 1
    return results

