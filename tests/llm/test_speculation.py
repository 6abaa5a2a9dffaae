"""Speculative decoding from n-gram drafts (runtime/drafts.py, Engine.step): the lookup and the draft length, then on
the tiny GPT the output with drafts equal to the output without, greedy and seeded, alone and 8 in flight, with
stop strings, log probabilities and max_tokens; sampling's distribution unchanged (a chi-square test over many
seeds); fewer decoder calls where the text repeats; served, drafted and accepted tokens on /metrics."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from tests.llm import clients
from tests.llm.conftest import build_repository, write_spec
from tests.llm.reference import tiny_greedy
from tritonkit.pipelines.llm.runtime import drafts
from tritonkit.pipelines.llm.runtime.assets import GenerationConfig
from tritonkit.pipelines.llm.runtime.loading import load_engine
from tritonkit.pipelines.llm.runtime.sampling import SamplingParams
from tritonkit.pipelines.llm.runtime.text import TextCodec

REPEATING = ["Repeat: the cat sat on the mat. Repeat: the cat sat", "abc abc abc abc ab", "1, 2, 3, 1, 2, 3, 1, 2",
             "def f(x):\n    return x\ndef f(", "Hello world. Hello", "so so so so so", "KV cache, KV cache, KV",
             "The end. The end. The"]


def test_lookup_continues_the_latest_earlier_occurrence_of_the_longest_ngram() -> None:
    sequence = np.array([1, 2, 3, 4, 9, 1, 2, 3, 4, 8, 7, 2, 3, 4])
    assert drafts.lookup(sequence, 3).tolist() == [8, 7, 2]   # "2 3 4" last ended at 8 (no earlier "7 2 3 4")
    assert drafts.lookup(sequence, 1).tolist() == [8]
    assert drafts.lookup(np.array([5, 6, 7, 5, 6]), 9).tolist() == [7, 5, 6]   # as far as the text goes
    assert drafts.lookup(np.array([1, 2, 3, 4, 5]), 4).size == 0   # nothing repeats
    assert drafts.lookup(np.array([3, 3]), 4).size == 0 and drafts.lookup(sequence, 0).size == 0


def test_the_draft_length_follows_the_acceptance_rate_and_the_batch() -> None:
    cost = drafts.CallCost()   # before any call is timed: TOKEN_COST a token
    widths = [drafts.width([(rate, 7)], 7, cost) for rate in (0.1, 0.5, 0.8, 0.9, 0.97)]
    assert widths[0] == 1 and widths == sorted(widths) and widths[-1] > 4   # a poor record drafts nothing
    assert drafts.width([(0.9, 2)], 7, cost) <= 3   # never past what was found
    assert drafts.width([(0.6, 7)] * 8, 7, cost) == 1   # a full batch pads every row: not worth it
    record = drafts.Drafter()
    assert record.rate == 0.5
    record.verified(4, 4)
    record.verified(3, 1)
    assert (record.drafted, record.accepted, record.misses) == (7, 5, 1) and record.rate == pytest.approx(6 / 8)
    assert drafts.Drafter(prior=record.rate).rate == record.rate   # a new request starts from the engine's record


def test_call_times_are_learned_from_the_calls() -> None:
    cost = drafts.CallCost()
    for _ in range(200):
        cost.observe(1, 0.010)
        cost.observe(5, 0.012)   # each token beyond the first adds 0.5 ms: a twentieth of a call
    assert cost.relative(1) == 1.0 and cost.relative(21) == pytest.approx(2.0, rel=0.01)
    cheap = [drafts.width([(0.5, 7)], 7, cost), drafts.width([(0.5, 7)] * 8, 7, cost)]
    assert cheap[0] > drafts.width([(0.5, 7)], 7, drafts.CallCost()) and cheap[1] > 1   # cheap tokens: draft more


def _outputs(tiny, codec, params: SamplingParams, draft_tokens: int, batch: int, prompts=REPEATING) -> tuple:
    """Each prompt's (generated ids, logprobs, finish reason), `batch` at a time, and the engine's counters."""
    engine = load_engine(tiny, {"draft_tokens": str(draft_tokens), "prefix_cache_bytes": "0"}).engine
    results = {}
    for start in range(0, len(prompts), batch):
        keys = range(start, min(start + batch, len(prompts)))
        results |= engine.run({k: (codec.encode(prompts[k]), params) for k in keys})
    return ([(out.generated, out.logprobs, out.finish_reason) for _, out in sorted(results.items())],
            engine.drafted_tokens, engine.accepted_tokens, engine.calls)


@pytest.mark.parametrize("params", [
    SamplingParams(max_tokens=40, ignore_eos=True),
    SamplingParams(max_tokens=40, temperature=0.8, seed=11, ignore_eos=True),
    SamplingParams(max_tokens=40, logprobs=3, stop=("mat",)),
    SamplingParams(max_tokens=7, presence_penalty=0.5, ignore_eos=True),
], ids=["greedy", "seeded", "logprobs-stop", "penalty-short"])
@pytest.mark.parametrize("batch", [1, 8], ids=["alone", "8-in-flight"])
def test_drafts_change_nothing_but_the_number_of_calls(tiny, codec, params, batch) -> None:
    plain, *_, plain_calls = _outputs(tiny, codec, params, 0, batch)
    drafted, count, accepted, calls = _outputs(tiny, codec, params, 7, batch)
    assert drafted == plain
    if batch == 1 and params.max_tokens == 40:
        assert accepted > 0 and calls < plain_calls, (count, accepted, calls, plain_calls)


def test_greedy_drafts_equal_pytorch(tiny, codec) -> None:
    eos = frozenset(GenerationConfig.load(tiny).eos_token_ids)
    drafted, _, accepted, _ = _outputs(tiny, codec, SamplingParams(max_tokens=30), 7, 1, REPEATING[:3])
    assert [ids for ids, _, _ in drafted] == [tiny_greedy(list(codec.encode(p)), 30, eos) for p in REPEATING[:3]]
    assert accepted > 0


def test_sampling_with_drafts_draws_from_the_same_distribution(tiny, codec) -> None:
    """400 seeded samples of a 4-token continuation with drafts against 400 others without (other seeds): a
    chi-square test of homogeneity over the continuations seen at least 5 times (the rest pooled)."""
    from scipy.stats import chi2_contingency

    engine = load_engine(tiny, {"draft_tokens": "7", "prefix_cache_bytes": "0"}).engine
    prompt = codec.encode(REPEATING[1])

    def samples(draft_tokens: int, seeds: range) -> Counter:
        engine.draft_tokens = draft_tokens
        params = [SamplingParams(max_tokens=4, temperature=1.0, top_k=4, seed=s, ignore_eos=True) for s in seeds]
        return Counter(tuple(engine.run({0: (prompt, p)})[0].generated) for p in params)

    without, accepted_before = samples(0, range(400)), engine.accepted_tokens
    with_drafts = samples(7, range(400, 800))
    assert engine.accepted_tokens > accepted_before + 100   # the drafts were verified and mostly kept
    common = [c for c in set(without) | set(with_drafts) if without[c] + with_drafts[c] >= 5]
    table = [[counts[c] for c in common] + [sum(counts.values()) - sum(counts[c] for c in common)]
             for counts in (without, with_drafts)]
    table = [row for row in np.array(table).T.tolist() if sum(row)]
    assert len(table) >= 5, table   # enough distinct continuations for the test to mean something
    assert chi2_contingency(np.array(table).T).pvalue > 0.01
    assert samples(7, range(50)) == samples(0, range(50))   # and a seed draws the same tokens either way


@pytest.mark.server
def test_served_drafts_are_counted_on_metrics(serve, tmp_path_factory) -> None:
    from tests.llm.clients import settled_metrics

    spec = write_spec(tmp_path_factory.mktemp("spec-metrics"), "tiny", generate_parameters={"cancel_poll_s": 0.05})
    server = serve(build_repository(spec))
    folder = server.repository / "generate" / "1"
    codec, eos = TextCodec(folder / "tokenizer.json"), frozenset(GenerationConfig.load(folder).eos_token_ids)
    before = settled_metrics(server.metrics_url)
    result = clients.grpc_stream(server.grpc_url, "llm", {"text_input": REPEATING[0], "max_tokens": 30})
    assert result.error == "" and result.ids == tiny_greedy(list(codec.encode(REPEATING[0])), 30, eos)
    after = settled_metrics(server.metrics_url)
    drafted = after["llm_draft_tokens_total"] - before["llm_draft_tokens_total"]
    accepted = after["llm_draft_accepted_tokens_total"] - before["llm_draft_accepted_tokens_total"]
    assert 0 < accepted <= drafted
    assert len(result.tokens) < len(result.ids)   # some responses carried several tokens
