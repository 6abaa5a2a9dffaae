"""Prefix reuse on the exported tiny GPT: a prompt starting like an earlier one copies that start's keys/values
instead of computing them, and generates exactly what a cold run does (PyTorch greedy); cached blocks are evicted
least recently used within their budget and make way for requests inside kv_cache_bytes; the counters reach
Triton's /metrics."""
from __future__ import annotations

import numpy as np
import pytest

from tests.llm import clients
from tests.llm.conftest import build_repository, write_spec
from tests.llm.reference import tiny_greedy
from tritonkit.pipelines.llm.runtime.assets import GenerationConfig
from tritonkit.pipelines.llm.runtime.engine import Engine
from tritonkit.pipelines.llm.runtime.kv_cache import MIB, CacheBudgetError, KVCachePool
from tritonkit.pipelines.llm.runtime.loading import load_engine
from tritonkit.pipelines.llm.runtime.prefix_cache import BLOCK, PrefixCache
from tritonkit.pipelines.llm.runtime.sampling import SamplingParams
from tritonkit.pipelines.llm.runtime.text import TextCodec

SYSTEM = "You are a helpful assistant who answers in one short sentence, politely. "  # 73 byte tokens
GREEDY = SamplingParams(max_tokens=16, ignore_eos=True)


def make_engine(decoder, tiny, budget=64 * MIB, prefix_bytes=4 * MIB, **kwargs) -> Engine:
    config = GenerationConfig.load(tiny)
    prefix = PrefixCache(decoder.geometry, prefix_bytes) if prefix_bytes else None
    return Engine(decoder, KVCachePool(decoder.geometry, budget, prefix, slot_positions=config.max_context),
                  config.eos_token_ids, config.max_context, **kwargs)


def generate(engine: Engine, key, prompt, params=GREEDY) -> tuple[list[int], int, int]:
    """(generated ids, prompt positions reused, prompt positions computed) of one request run alone."""
    before = engine.prefilled_tokens
    engine.admit(key, prompt, params)
    reused = engine.generations[key].reused
    while key in engine:
        out = engine.step([key])[0]
    return out.generated, reused, engine.prefilled_tokens - before


def test_a_shared_system_prompt_is_reused_and_gives_the_tokens_of_a_cold_run(decoder, tiny, codec):
    first, second = codec.encode(SYSTEM + "What is 2+2?"), codec.encode(SYSTEM + "Name a color.")
    engine = make_engine(decoder, tiny, prefill_chunk=16)
    generate(engine, "a", first)
    tokens, reused, computed = generate(engine, "b", second)
    cold, cold_reused, cold_computed = generate(make_engine(decoder, tiny, prefix_bytes=0), "b", second)
    assert tokens == cold == tiny_greedy(list(second), 16)
    assert (cold_reused, cold_computed) == (0, len(second))
    assert reused == len(SYSTEM) and computed == len(second) - len(SYSTEM)  # token granularity: 73, not 64
    stats = engine.pool.prefix.stats
    assert (stats.hits, stats.misses, stats.reused_tokens) == (1, 1, len(SYSTEM))


@pytest.mark.slow  # many engine steps: seconds
def test_chunked_prefill_starts_after_the_reused_prefix(decoder, tiny, codec):
    prompt = codec.encode(SYSTEM * 2 + "Name a color.")  # 159 tokens: 10 chunks of 16 cold
    engine = make_engine(decoder, tiny, prefill_chunk=16)
    generate(engine, "warm-up", codec.encode(SYSTEM * 2 + "What is 2+2?"))
    engine.admit("x", prompt, GREEDY)
    steps = []
    while "x" in engine:
        steps.append(engine.step(["x"])[0].token_ids)
    assert engine.pool.prefix.stats.reused_tokens == 2 * len(SYSTEM)  # 146: 13 tokens left, one chunk
    assert steps[0] != [] and [t for s in steps for t in s] == tiny_greedy(list(prompt), 16)


def test_the_same_prompt_again_computes_only_its_last_token(decoder, tiny, codec):
    prompt = codec.encode(SYSTEM + "Hi")
    engine = make_engine(decoder, tiny)
    cold, _, _ = generate(engine, "a", prompt)
    again, reused, computed = generate(engine, "b", prompt)
    assert again == cold and (reused, computed) == (len(prompt) - 1, 1)  # its logits give the first token


@pytest.mark.slow  # many engine steps: seconds
def test_a_chats_next_turn_reuses_the_previous_answer_too(decoder, tiny, codec):
    """A finished generation leaves prompt + generated ids cached: the next turn starts with both."""
    engine = make_engine(decoder, tiny)
    turn = codec.encode(SYSTEM + "Q1?")
    answer, _, _ = generate(engine, "t1", turn, SamplingParams(max_tokens=40, ignore_eos=True))
    follow_up = np.concatenate([turn, answer, codec.encode(" Q2?")])
    tokens, reused, _ = generate(engine, "t2", follow_up)
    assert reused > len(turn) + 32  # whole blocks of the answer too (its last token was never run: not cached)
    assert tokens == tiny_greedy(list(follow_up), 16)


def test_blocks_are_evicted_least_recently_used_within_the_budget(decoder, tiny, codec):
    """Each request leaves one 16-token block (a 17-token prompt, one new token); the budget holds three."""
    block_bytes = BLOCK * decoder.geometry.bytes_per_token
    engine = make_engine(decoder, tiny, prefix_bytes=3 * block_bytes)
    prefix = engine.pool.prefix
    prompts = {name: codec.encode(name * 17) for name in "ABCD"}  # distinct first blocks
    one = SamplingParams(max_tokens=1, ignore_eos=True)
    for name in "ABC":
        generate(engine, name, prompts[name], one)
        assert prefix.bytes <= prefix.budget_bytes
    assert len(prefix) == 3 and prefix.stats.evicted_blocks == 0
    _, reused, _ = generate(engine, "A again", prompts["A"], one)  # A is now the most recently used
    assert reused == 16
    generate(engine, "D", prompts["D"], one)  # full: the least recently used, B, makes way
    assert len(prefix) == 3 and prefix.bytes == 3 * block_bytes <= prefix.budget_bytes
    assert prefix.stats.evicted_blocks == 1
    assert {name: prefix.match(prompts[name]).tokens for name in "ABCD"} == {"A": 16, "B": 0, "C": 16, "D": 16}


def test_cached_blocks_make_way_for_a_request_inside_kv_cache_bytes(decoder, tiny, codec):
    """Cached prefixes count against kv_cache_bytes with the live requests, and never get a request refused:
    one that needs their memory evicts them; a finishing request caches only what is free."""
    per_token = decoder.geometry.bytes_per_token
    engine = make_engine(decoder, tiny, budget=60 * per_token, prefix_bytes=48 * per_token)
    pool, prefix = engine.pool, engine.pool.prefix
    one = SamplingParams(max_tokens=1, ignore_eos=True)
    for name in "AB":
        generate(engine, name, codec.encode(name * 17), one)
    assert prefix.bytes == 32 * per_token and pool.free_bytes == 28 * per_token
    engine.admit("big", codec.encode("Z" * 10), SamplingParams(max_tokens=40, ignore_eos=True))  # 50 positions
    assert prefix.bytes == 0 and pool.reserved_bytes == 50 * per_token  # both blocks evicted for it
    assert prefix.stats.evicted_blocks == 2
    with pytest.raises(CacheBudgetError):  # 18 positions do not fit beside the 50: refused...
        generate(engine, "C", codec.encode("C" * 17), one)
    engine.cancel("big")
    tokens, _, _ = generate(engine, "C", codec.encode("C" * 17), one)  # ...until "big" ends
    assert len(tokens) == 1 and pool.reserved_bytes == 0 and prefix.bytes == 16 * per_token


def test_prefix_cache_bytes_parameter(tiny):
    default = load_engine(tiny, {"kv_cache_bytes": str(8 * MIB)}).engine.pool.prefix
    assert default is not None and default.budget_bytes == MIB  # an eighth of kv_cache_bytes
    assert load_engine(tiny, {"kv_cache_bytes": str(8 * MIB), "prefix_cache_bytes": "0"}).engine.pool.prefix is None
    with pytest.raises(ValueError, match=r"prefix_cache_bytes \(9\d+\) must be between 0 .* and kv_cache_bytes"):
        load_engine(tiny, {"kv_cache_bytes": str(8 * MIB), "prefix_cache_bytes": str(9 * MIB)})


@pytest.mark.server
def test_served_requests_sharing_a_system_prompt_count_hits_on_metrics(serve, tmp_path_factory):
    from tests.llm.clients import settled_metrics

    spec = write_spec(tmp_path_factory.mktemp("prefix-spec"), "tiny", generate_parameters={"cancel_poll_s": 0.05})
    server = serve(build_repository(spec))
    codec = TextCodec(server.repository / "generate" / "1" / "tokenizer.json")
    eos = frozenset(GenerationConfig.load(server.repository / "generate" / "1").eos_token_ids)
    before = settled_metrics(server.metrics_url)
    assert before["llm_prefix_cache_budget_bytes"] > 0 and before["llm_prefix_cache_hits_total"] == 0
    first = clients.http(server.http_url, "llm", {"text_input": SYSTEM + "What is 2+2?", "max_tokens": 12}, stream=True)
    second = clients.grpc_stream(server.grpc_url, "llm", {"text_input": SYSTEM + "Name a color.", "max_tokens": 12})
    assert first.error == second.error == ""
    assert second.ids == tiny_greedy(list(codec.encode(SYSTEM + "Name a color.")), 12, eos)
    after = settled_metrics(server.metrics_url)
    grown = {k: after[k] - before[k] for k in after if k.endswith("_total")}
    assert grown["llm_prefix_cache_hits_total"] == 1 and grown["llm_prefix_cache_misses_total"] == 1
    assert grown["llm_prefix_cache_reused_tokens_total"] == len(SYSTEM)
    prompts = len(SYSTEM + "What is 2+2?") + len(SYSTEM + "Name a color.")
    assert grown["llm_prompt_tokens_computed_total"] == prompts - len(SYSTEM)
    assert 0 < after["llm_prefix_cache_bytes"] <= after["llm_prefix_cache_budget_bytes"]
