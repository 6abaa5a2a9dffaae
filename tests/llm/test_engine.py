"""The plain-Python generation loop on the exported tiny GPT: KV-cache decoding equals PyTorch without a cache,
batched steps equal single runs, stop conditions, cancellation, the cache budget, which generation waited longest."""
from __future__ import annotations

import gc
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from tests.llm.reference import tiny_greedy
from tritonkit.pipelines.llm import runtime
from tritonkit.pipelines.llm.runtime import pages
from tritonkit.pipelines.llm.runtime.assets import GenerationConfig
from tritonkit.pipelines.llm.runtime.decoder import Row
from tritonkit.pipelines.llm.runtime.engine import (
    CANCELLED,
    LENGTH,
    STOP,
    Engine,
    GenerationLimitError,
    plan_calls,
)
from tritonkit.pipelines.llm.runtime.kv_cache import MIB, CacheBudgetError, KVCache, KVCachePool
from tritonkit.pipelines.llm.runtime.sampling import SamplingParams
from tritonkit.pipelines.llm.runtime.text import visible_text

PROMPTS = ["Hello", "The capital of France is", "a", "Once upon a time, in a land far away,", "✓ unicode é",
           "12345678901234567890", "xyz", "Triton", "in-flight batching", "KV cache", "?", "tokens", "stream me",
           "GPU-less", "two cores", "sixteen"]


def make_engine(decoder, tiny, codec, budget=64 * MIB, **kwargs) -> Engine:
    config = GenerationConfig.load(tiny)
    return Engine(decoder, KVCachePool(decoder.geometry, budget, slot_positions=config.max_context),
                  config.eos_token_ids, config.max_context, decode=codec.decode, **kwargs)


def run_one(decoder, tiny, codec, prompt, params) -> tuple[list[int], str]:
    out = make_engine(decoder, tiny, codec).run({"x": (codec.encode(prompt), params)})["x"]
    return out.generated, out.finish_reason


@pytest.mark.slow  # many engine steps (or torch's own decoding): seconds
@pytest.mark.parametrize("prompt", ["Hello", "Once upon a time, in a land far away,"])
def test_kv_cache_decoding_equals_pytorch_without_cache(decoder, tiny, codec, prompt):
    ids = codec.encode(prompt)
    tokens, reason = run_one(decoder, tiny, codec, prompt, SamplingParams(max_tokens=24, ignore_eos=True))
    assert reason == LENGTH and len(tokens) == 24
    assert tokens == tiny_greedy(list(ids), 24)


def test_sixteen_at_once_equal_each_alone(decoder, tiny, codec):
    params = [
        SamplingParams(max_tokens=10 + i % 5)
        if i % 2
        else SamplingParams(max_tokens=12, temperature=1.3, top_k=20, seed=i)
        for i in range(16)
    ]
    alone = {i: run_one(decoder, tiny, codec, PROMPTS[i], params[i]) for i in range(16)}
    engine = make_engine(decoder, tiny, codec)
    together = engine.run({i: (codec.encode(PROMPTS[i]), params[i]) for i in range(16)})
    assert {i: (o.generated, o.finish_reason) for i, o in together.items()} == alone
    assert engine.pool.reserved_bytes == 0 and len(engine.pool) == 0


def test_prefill_and_decode_share_a_step(decoder, tiny, codec):
    params = SamplingParams(max_tokens=6, ignore_eos=True)
    want = {k: run_one(decoder, tiny, codec, p, params)[0] for k, p in (("a", "Hello"), ("b", "KV cache"))}
    engine = make_engine(decoder, tiny, codec, call_cost=1000)  # padding is cheap: one call for both
    engine.admit("a", codec.encode("Hello"), params)
    first = engine.step(["a"])
    engine.admit("b", codec.encode("KV cache"), params)
    calls = engine.calls
    mixed = engine.step(["a", "b"])  # a decodes its 2nd token while b prefills
    assert engine.calls == calls + 1
    got = {"a": first[0].token_ids + mixed[0].token_ids, "b": mixed[1].token_ids}
    while engine.generations:
        for out in engine.step(list(engine.generations)):
            got[out.key] += out.token_ids
    assert got == want


def test_plan_calls_separates_long_prefills_from_decodes():
    assert plan_calls([1, 1, 1], 32) == [[0, 1, 2]]
    assert plan_calls([5, 1], 32) == [[0, 1]]  # 2 x 5 padded positions cost less than a second call
    assert plan_calls([200, 1, 1, 1], 32) == [[0], [1, 2, 3]]
    assert plan_calls([], 32) == []


def test_plan_calls_gives_each_store_its_own_call():
    """A call reads and writes the caches of one store in place (rows of several would be copied)."""
    assert plan_calls([1, 1, 1, 1], 32, ["a", "b", "a", "b"]) == [[0, 2], [1, 3]]
    assert plan_calls([200, 1, 1], 32, ["a", "a", "b"]) == [[0], [1], [2]]
    assert plan_calls([1, 1], 32, ["a", "a"]) == [[0, 1]]


def test_max_tokens_and_stop_token(decoder, tiny, codec):
    free, _ = run_one(decoder, tiny, codec, "Hello", SamplingParams(max_tokens=12, ignore_eos=True))
    three, reason = run_one(decoder, tiny, codec, "Hello", SamplingParams(max_tokens=3, ignore_eos=True))
    assert (three, reason) == (free[:3], LENGTH)
    target = free[5]
    cut = free.index(target)
    stopped, reason = run_one(decoder, tiny, codec, "Hello", SamplingParams(max_tokens=12, stop_token_ids=(target,)))
    assert (stopped, reason) == (free[:cut], STOP)


def test_stop_string_ends_generation_where_its_text_appears(decoder, tiny, codec):
    free, _ = run_one(decoder, tiny, codec, "The capital of France is", SamplingParams(max_tokens=30, ignore_eos=True))
    text = codec.decode(free)
    needle = next(text[i:i + 2] for i in range(4, len(text) - 2) if "\ufffd" not in text[i:i + 2])
    tokens, reason = run_one(decoder, tiny, codec, "The capital of France is",
                             SamplingParams(max_tokens=30, ignore_eos=True, stop=(needle,)))
    assert reason == STOP and len(tokens) < len(free) and tokens == free[:len(tokens)]
    shown, stopped = visible_text(codec.decode, tokens, (needle,), final=True)
    assert stopped and shown == text[:text.index(needle)]


def test_cancel_frees_the_cache(decoder, tiny, codec):
    engine = make_engine(decoder, tiny, codec)
    engine.admit("x", codec.encode("Hello"), SamplingParams(max_tokens=50))
    engine.step(["x"])
    assert engine.pool.reserved_bytes == engine.pool.bytes_for(5 + 50)
    out = engine.cancel("x")
    assert out.finish_reason == CANCELLED and len(out.generated) == 1
    assert engine.pool.reserved_bytes == 0 and "x" not in engine and engine.cancel("x") is None


def test_budget_rejects_what_does_not_fit_with_the_numbers(decoder, tiny, codec):
    per_token = decoder.geometry.bytes_per_token  # 2 x 2 layers x 2 heads x 16 x 4 bytes
    engine = make_engine(decoder, tiny, codec, budget=per_token * 100)
    engine.admit("a", codec.encode("Hello"), SamplingParams(max_tokens=55))  # 60 positions
    with pytest.raises(CacheBudgetError) as err:
        engine.admit("b", codec.encode("Hello"), SamplingParams(max_tokens=45))  # 50 > 40 left
    message = str(err.value)
    assert "KV cache budget exceeded" in message and "50 positions" in message and "1 running requests" in message
    assert "lower max_tokens" in message
    assert "b" not in engine and engine.pool.reserved_bytes == per_token * 60
    engine.cancel("a")
    engine.admit("b", codec.encode("Hello"), SamplingParams(max_tokens=45))


def test_max_streams_refuses_the_extra_generation_until_one_ends(decoder, tiny, codec):
    engine = make_engine(decoder, tiny, codec, max_streams=2)
    for key in ("a", "b"):
        engine.admit(key, codec.encode("Hello"), SamplingParams(max_tokens=3, ignore_eos=True))
    with pytest.raises(GenerationLimitError, match=r"2 generations are live, the limit \(max_streams\) is 2"):
        engine.admit("c", codec.encode("Hello"), SamplingParams(max_tokens=3))
    assert "c" not in engine and len(engine.pool) == 2  # nothing reserved for the refused one
    while "a" in engine:
        engine.step(["a"])
    engine.admit("c", codec.encode("Hello"), SamplingParams(max_tokens=3))


def test_requests_beyond_the_context_or_vocabulary_are_refused(decoder, tiny, codec):
    engine = make_engine(decoder, tiny, codec)
    with pytest.raises(ValueError, match="exceeds the model's context of 256 tokens"):
        engine.admit("a", codec.encode("Hello"), SamplingParams(max_tokens=252))
    with pytest.raises(ValueError, match=r"token ids must be in \[0, 259\)"):
        engine.admit("b", [1, 300], SamplingParams())
    with pytest.raises(ValueError, match="prompt is empty"):
        engine.admit("c", [], SamplingParams())
    assert engine.pool.reserved_bytes == 0


def test_a_request_naming_no_max_tokens_may_fill_the_context_or_what_the_budget_holds(decoder, tiny, codec):
    """As OpenAI's and vLLM's servers take it: no max_tokens is the rest of the context (256 for the tiny GPT), and
    within a budget too small for that, the most the whole budget holds; a generation that never ends fills it."""
    prompt = codec.encode("Hello")
    out = make_engine(decoder, tiny, codec).run({"x": (prompt, SamplingParams(ignore_eos=True))})["x"]
    assert out.finish_reason == LENGTH and prompt.size + len(out.generated) == 256
    small = make_engine(decoder, tiny, codec, budget=100 * decoder.geometry.bytes_per_token)
    assert small.admit("y", prompt, SamplingParams()).params.max_tokens == 100 - prompt.size
    assert make_engine(decoder, tiny, codec, max_tokens_limit=40).room(prompt.size) == 40


def test_stepped_at_orders_the_generations_that_waited_longest(decoder, tiny, codec):
    """What generate's loop picks first when more generations run than a step advances (max_batch_size)."""
    engine = make_engine(decoder, tiny, codec)
    engine.admit("old", codec.encode("Hello"), SamplingParams(max_tokens=5))
    time.sleep(0.01)
    engine.admit("new", codec.encode("Hello"), SamplingParams(max_tokens=5))
    waited = sorted(engine.generations, key=lambda k: engine.generations[k].stepped_at)
    assert waited == ["old", "new"]
    engine.step(["old"])  # a step restarts its clock
    assert sorted(engine.generations, key=lambda k: engine.generations[k].stepped_at) == ["new", "old"]


def test_decoder_step_runs_rows_of_any_lengths_in_place_or_copied(decoder):
    """Rows with different caches and prompt lengths in one call (their new tokens right-padded) give the logits and
    cache entries each gives alone: rows of one store read and write their slots in place (a slot between them
    that is not a row's runs idle, untouched), rows of caches made alone are copied into a padded past and back."""
    pool = KVCachePool(decoder.geometry, 64 * MIB, slot_positions=32)
    rng = np.random.default_rng(0)
    prompts = [rng.integers(0, 256, n) for n in (3, 9, 1)]
    alone = []
    for p in prompts:
        cache = KVCache.empty(decoder.geometry, 20)
        decoder.step([Row(cache, p)])
        alone.append((decoder.step([Row(cache, np.array([7]))]), cache))
    slotted = [pool.allocate(i, 20) for i in range(4)]  # slots 0..3; slot 1 sits the calls out
    assert [c.slot for c in slotted] == [0, 1, 2, 3] and all(c.store is slotted[0].store for c in slotted)
    bystander = slotted.pop(1)
    decoder.step([Row(bystander, np.array([1, 2]))])
    kept = bystander.key.copy(), bystander.value.copy()
    copied = [KVCache.empty(decoder.geometry, 20) for _ in prompts]
    for caches in (slotted, copied):
        decoder.step([Row(c, p) for c, p in zip(caches, prompts)])
        together = decoder.step([Row(c, np.array([7])) for c in caches])
        np.testing.assert_allclose(together, np.concatenate([logits for logits, _ in alone]), atol=1e-4)
        for cache, (_, single) in zip(caches, alone):
            assert cache.length == single.length == len(prompts[caches.index(cache)]) + 1
            n = cache.length
            np.testing.assert_allclose(cache.key[:, :, :n], single.key[:, :, :n], atol=1e-5)
            np.testing.assert_allclose(cache.value[:, :, :n], single.value[:, :, :n], atol=1e-5)
    assert bystander.length == 2
    np.testing.assert_array_equal(bystander.key, kept[0])
    np.testing.assert_array_equal(bystander.value, kept[1])


def test_freed_slots_are_filled_by_the_last_cache_and_given_back(decoder):
    """The live caches of a store stay in slots 0..n-1 (a call over them wastes no row): freeing one moves the
    store's last cache into its slot, the moved cache decoding on as before; a store with no cache left is
    dropped, its pages with it."""
    pool = KVCachePool(decoder.geometry, 64 * MIB, slot_positions=32, slots_per_store=4)
    gc.collect()  # earlier tests' arrays held in reference cycles (prefix blocks) go now, not mid-test
    mapped = pages.mapped_bytes()
    caches = [pool.allocate(i, 20) for i in range(5)]
    assert [c.slot for c in caches] == [0, 1, 2, 3, 0] and len(pool.stores) == 2
    decoder.step([Row(c, np.array([5, 6, 7])) for c in caches[:4]])
    expected = caches[3].key[:, :, :3].copy()
    pool.free(1)
    assert caches[3].slot == 1 and sorted(c.slot for c in pool.caches.values() if c.store is caches[0].store) == \
        [0, 1, 2]
    np.testing.assert_array_equal(caches[3].key[:, :, :3], expected)
    assert not caches[0].store.key[:, 3].any()  # the old slot's pages given back
    moved = decoder.step([Row(caches[3], np.array([9]))])
    reference = KVCache.empty(decoder.geometry, 20)
    decoder.step([Row(reference, np.array([5, 6, 7]))])
    np.testing.assert_allclose(moved, decoder.step([Row(reference, np.array([9]))]), atol=1e-5)
    for key in (0, 2, 3, 4):
        pool.free(key)
    del caches, reference
    gc.collect()
    assert pool.stores == [] and pages.mapped_bytes() == mapped


def test_a_blocks_binding_is_made_once_and_goes_with_its_store(decoder):
    """A block of slots is bound as every layer's past and present on its first call only; later calls over it, of
    any number of new tokens, bind just those (and decode as a cache alone does); a dropped store's go with it."""
    pool = KVCachePool(decoder.geometry, 64 * MIB, slot_positions=32, slots_per_store=4)
    caches = [pool.allocate(i, 20) for i in range(2)]
    decoder.step([Row(c, np.array([5, 6, 7])) for c in caches])
    bindings = decoder._store_bindings[caches[0].store]
    made = bindings[0, 2]
    together = decoder.step([Row(c, np.array([9, 4][:i + 1])) for i, c in enumerate(caches)])
    assert list(bindings) == [(0, 2)] and bindings[0, 2] is made
    reference = KVCache.empty(decoder.geometry, 20)
    decoder.step([Row(reference, np.array([5, 6, 7]))])
    np.testing.assert_allclose(together[1], decoder.step([Row(reference, np.array([9, 4]))])[0], atol=1e-5)
    stores = len(decoder._store_bindings)
    pool.free(0)
    pool.free(1)
    del caches, bindings
    gc.collect()
    assert len(decoder._store_bindings) == stores - 1


@pytest.mark.slow  # many engine steps (or torch's own decoding): seconds
def test_many_generations_leave_nothing_behind(decoder, tiny, codec):
    """Soak-style churn in process (finished by length, stop string and cancellation, unique keys as Triton's
    correlation ids are): the engine's tables end empty and traced memory does not grow with the request count
    (the soak's RSS growth levels off after warm-up; a per-request leftover would show here first)."""
    engine = make_engine(decoder, tiny, codec)
    keys = iter(range(1 << 40, (1 << 40) + 10_000))
    params = [SamplingParams(max_tokens=6, ignore_eos=True), SamplingParams(max_tokens=8, stop=("e",)),
              SamplingParams(max_tokens=12, temperature=1.0, seed=3)]

    def wave() -> None:
        batch = [next(keys) for _ in range(6)]
        for i, key in enumerate(batch):
            engine.admit(key, codec.encode(PROMPTS[key % len(PROMPTS)]), params[i % len(params)])
        engine.step(batch)
        engine.cancel(batch[0])
        while live := [k for k in batch if k in engine]:
            engine.step(live)

    gc.collect()  # earlier tests' caches still waiting for the collector would go during the waves
    for _ in range(5):  # warm-up: the decoder's call buffers and onnxruntime's arena reach their size
        wave()
    ours = [tracemalloc.Filter(True, str(Path(runtime.__file__).parent / "*"))]  # allocated by the runtime's lines
    tracemalloc.start()
    try:
        before, mapped = tracemalloc.take_snapshot().filter_traces(ours), pages.mapped_bytes()
        for _ in range(60):
            wave()
        after = tracemalloc.take_snapshot().filter_traces(ours)
    finally:
        tracemalloc.stop()
    assert engine.generations == {} and len(engine.pool) == 0 and engine.pool.reserved_bytes == 0
    grown = after.compare_to(before, "lineno")
    assert sum(d.size_diff for d in grown) < 8 * 1024, [str(d) for d in grown[:3]]
    assert pages.mapped_bytes() == mapped  # caches and call buffers (pages of their own, not traced) all gone


class _CountingDecoder:
    """The decoder with the ids each engine step ran recorded (`calls[-1]` sums the current step's decoder calls):
    tokens per step bound a step's time."""

    def __init__(self, decoder) -> None:
        self.decoder, self.calls = decoder, [0]

    def __getattr__(self, name):
        return getattr(self.decoder, name)

    def tails(self, rows):
        self.calls[-1] += sum(len(r.ids) for r in rows)
        return self.decoder.tails(rows)


@pytest.mark.slow  # many engine steps (or torch's own decoding): seconds
def test_chunked_prefill_gives_the_greedy_tokens_of_one_prefill(decoder, tiny, codec):
    prompt = codec.encode("Once upon a time, in a land far away, " * 5)  # 190 byte tokens: 12 chunks of up to 16
    params = SamplingParams(max_tokens=24, ignore_eos=True)
    whole = make_engine(decoder, tiny, codec).run({"x": (prompt, params)})["x"].generated
    chunked = make_engine(decoder, tiny, codec, prefill_chunk=16)
    chunked.admit("x", prompt, params)
    steps = []
    while "x" in chunked:
        steps.append(chunked.step(["x"])[0].token_ids)
    assert [t for s in steps for t in s] == whole == tiny_greedy(list(prompt), 24)
    assert len(prompt) == 190 and steps[:11] == [[]] * 11 and steps[11] != []  # the first token with the 12th chunk


def test_a_long_prefill_runs_in_chunks_between_the_steps_of_running_decodes(decoder, tiny, codec):
    params = SamplingParams(max_tokens=30, ignore_eos=True)
    alone = {
        k: run_one(decoder, tiny, codec, p, params)[0] for k, p in (("short", "Hello"), ("long", "KV cache " * 20))
    }
    engine = make_engine(decoder, tiny, codec, prefill_chunk=16)
    counting = engine.decoder = _CountingDecoder(decoder)
    engine.admit("short", codec.encode("Hello"), params)
    got = {"short": engine.step(["short"])[0].token_ids, "long": []}
    engine.admit("long", codec.encode("KV cache " * 20), params)  # 180 tokens arrive while "short" decodes
    counting.calls.clear()
    while engine.generations:
        counting.calls.append(0)
        for out in engine.step(list(engine.generations)):
            got[out.key] += out.token_ids
    assert got == alone
    assert max(counting.calls) <= 16 + 1  # no step ran more than one chunk and the other request's token
    assert len(alone["short"]) == 30 and counting.calls[:11] == [17] * 11  # short got a token in every step


def test_prefill_chunk_is_shared_by_the_prompts_of_one_step(decoder, tiny, codec):
    engine = make_engine(decoder, tiny, codec, prefill_chunk=8)
    params = SamplingParams(max_tokens=2, ignore_eos=True)
    for key in ("a", "b", "c"):
        engine.admit(key, codec.encode("abcdef"), params)  # 6 tokens each, 8 per step: a, then b in part
    assert engine.chunks([engine.generations[k] for k in ("a", "b", "c")]) == [6, 2, 0]


def test_a_prompt_longer_than_the_context_or_the_whole_budget_is_refused_not_truncated(decoder, tiny, codec):
    engine = make_engine(decoder, tiny, codec)
    with pytest.raises(ValueError, match="the prompt has 300 tokens and the model's context holds 256") as long:
        engine.admit("a", [65] * 300, SamplingParams(max_tokens=1))
    assert "shorten the prompt to at most 255 tokens" in str(long.value)
    small = make_engine(decoder, tiny, codec, budget=decoder.geometry.bytes_per_token * 100)
    with pytest.raises(ValueError, match="more than the whole budget of 0.05 MiB") as big:
        small.admit("b", [65] * 120, SamplingParams(max_tokens=1))  # fits the context, never the budget
    assert not isinstance(big.value, CacheBudgetError) and "raise the model's kv_cache_bytes" in str(big.value)
    assert engine.pool.reserved_bytes == small.pool.reserved_bytes == 0


@pytest.mark.slow  # many engine steps (or torch's own decoding): seconds
def test_a_long_prompts_cache_pages_are_given_back(decoder, tiny, codec):
    """Two long prompts' caches (200 positions) give their slots' pages back when they finish, while a short stream
    decodes on in the same store, and the store goes once every generation has finished; the session works on
    after. Before caches were slots of a store, a call's padded copy of them stayed at its peak for good (1,211 MiB
    PSS for the SmolLM2 server after the long-prompt run) until that buffer followed the recent calls' needs."""
    engine = make_engine(decoder, tiny, codec, prefill_chunk=32)
    gc.collect()
    mapped = pages.mapped_bytes()
    params = SamplingParams(max_tokens=8, ignore_eos=True)
    engine.admit("short", codec.encode("Hello"), SamplingParams(max_tokens=100, ignore_eos=True))
    engine.step(["short"])
    for key in ("long", "long too"):
        engine.admit(key, codec.encode("KV cache " * 22), params)  # 198 tokens
    store = engine.pool.caches["long"].store
    assert [engine.pool.caches[k].slot for k in ("short", "long", "long too")] == [0, 1, 2]
    while "long" in engine or "long too" in engine:
        engine.step(list(engine.generations))
        assert store.key[:, 1].any() == ("long" in engine or "long too" in engine)  # written, then given back
    assert engine.pool.caches["short"].slot == 0 and not store.key[:, 1:].any()  # zero pages again: given back
    while engine.generations:
        engine.step(list(engine.generations))
    del store
    gc.collect()
    assert engine.pool.stores == [] and pages.mapped_bytes() == mapped and decoder.past.array.size == 0
    params = SamplingParams(max_tokens=12, ignore_eos=True)
    assert run_one(decoder, tiny, codec, "Hello", params)[0] == tiny_greedy(list(codec.encode("Hello")), 12)
