"""Greedy output depends on the prompt alone (export/kv_graph.py's paired queries): a token's logits are the same bit
for bit whether it runs alone, in a prefill, in chunks or beside other rows, and the engine's text is the same every
way a server runs a prompt (export/invariance.py), speculative decoding included, greedy and seeded, on the tiny
GPT."""
from __future__ import annotations

import numpy as np
import pytest

from tritonkit.pipelines.llm.export import invariance
from tritonkit.pipelines.llm.runtime.decoder import Row
from tritonkit.pipelines.llm.runtime.kv_cache import MIB, KVCache, KVCachePool
from tritonkit.pipelines.llm.runtime.sampling import SamplingParams

PROMPTS = [f"Question {i}: what comes after {'ab ' * (i + 1)}?" for i in range(10)]


def _logits(decoder, pool: KVCachePool, chunks: list[np.ndarray]) -> np.ndarray:
    """The last token's logits after feeding `chunks` one call each into a fresh cache of `pool`."""
    cache = pool.allocate("probe", sum(len(c) for c in chunks) + 1)
    try:
        for chunk in chunks:
            logits = decoder.step([Row(cache, chunk)])[0].copy()
        return logits
    finally:
        pool.free("probe")


def test_a_token_has_the_same_logits_alone_in_a_prefill_in_chunks_and_beside_others(decoder, codec):
    pool = KVCachePool(decoder.geometry, 64 * MIB, slot_positions=128)
    prompt = codec.encode(PROMPTS[3])
    whole = _logits(decoder, pool, [prompt])
    np.testing.assert_array_equal(_logits(decoder, pool, [prompt[:-1], prompt[-1:]]), whole)  # decoded alone
    np.testing.assert_array_equal(_logits(decoder, pool, [prompt[i:i + 1] for i in range(len(prompt))]), whole)
    np.testing.assert_array_equal(_logits(decoder, pool, [prompt[:7], prompt[7:]]), whole)
    # decoded beside a prefilling row (one padded call), and in a cache of its own (a copied call)
    caches = [pool.allocate(k, len(prompt) + 8) for k in "ab"]
    decoder.step([Row(caches[0], prompt[:-1])])
    mixed = decoder.step([Row(caches[0], prompt[-1:]), Row(caches[1], prompt[:5])])
    np.testing.assert_array_equal(mixed[0], whole)
    alone = KVCache.empty(decoder.geometry, len(prompt) + 8)
    decoder.step([Row(alone, prompt[:-1])])
    np.testing.assert_array_equal(decoder.step([Row(alone, prompt[-1:]), Row(caches[1], prompt[5:6])])[0], whole)


def test_the_logits_of_drafted_tokens_are_those_each_gets_decoded_alone(decoder, codec):
    """Verifying drafts reads the logits after each of a row's new tokens from one call (`tails`): each is bit for bit
    the logits that token gets when it is decoded alone, beside a row that asks for its last token's only."""
    pool = KVCachePool(decoder.geometry, 64 * MIB, slot_positions=128)
    prompt = codec.encode(PROMPTS[5])
    expected = np.array([_logits(decoder, pool, [prompt[:n]]) for n in range(len(prompt) - 5, len(prompt) + 1)])
    caches = [pool.allocate(k, len(prompt) + 8) for k in "ab"]
    decoder.step([Row(caches[0], prompt[:-6])])
    tails = decoder.tails([Row(caches[0], prompt[-6:], logits=6), Row(caches[1], prompt[:3])])
    assert tails.shape == (2, 6, decoder.vocab_size)
    np.testing.assert_array_equal(tails[0], expected)
    np.testing.assert_array_equal(tails[1, -1], _logits(decoder, pool, [prompt[:3]]))
    assert caches[0].length == len(prompt)


@pytest.mark.parametrize("params", [SamplingParams(max_tokens=12, ignore_eos=True),
                                    SamplingParams(max_tokens=12, temperature=0.9, seed=5, ignore_eos=True)],
                         ids=["greedy", "seeded"])
def test_generated_text_is_the_same_every_way_the_engine_runs_it(tiny, codec, params):
    result = invariance.measure(tiny, [codec.encode(p) for p in PROMPTS], params=params)
    assert result.fraction == 1.0, result.differing()
    assert set(result.ways) == set(invariance.WAYS) and all(len(ids) == 12 for ids in result.alone)
    assert result.accepted > 0, (result.drafted, result.accepted)   # the drafted ways did speculate
