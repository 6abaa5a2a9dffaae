"""Penalties, logit bias and log probabilities in the engine, on the tiny GPT: the formulas OpenAI defines, log
probabilities that are the decoder's own log-softmax, rows beside them unchanged, bad values named."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tests.llm.test_engine import PROMPTS, make_engine
from tritonkit.pipelines.llm.runtime.decoder import Row
from tritonkit.pipelines.llm.runtime.kv_cache import KVCache
from tritonkit.pipelines.llm.runtime.requests import sampling_params
from tritonkit.pipelines.llm.runtime.sampling import Logprob, SamplingParams, adjust, logprob
from tritonkit.pipelines.llm.runtime.triton_io import logprob_outputs


def test_penalties_and_bias_follow_openais_formula():
    logits = np.arange(6, dtype=np.float32)
    params = SamplingParams(presence_penalty=0.5, frequency_penalty=0.25, logit_bias=((0, 3.0), (5, -100.0)))
    adjust(logits, params, [1, 1, 1, 4])
    assert logits.tolist() == [3.0, 1 - 0.5 - 3 * 0.25, 2.0, 3.0, 4 - 0.5 - 0.25, 5 - 100.0]
    untouched = np.arange(6, dtype=np.float32)
    adjust(untouched, SamplingParams(), [1, 2])
    assert untouched.tolist() == list(range(6))


def test_a_logprob_is_the_log_softmax_with_its_best_alternatives():
    row = np.array([1.0, 3.0, 2.0, 3.0], np.float32)
    found = logprob(row, 2, top=3)
    expected = row - np.log(np.exp(row.astype(np.float64)).sum())
    assert found.logprob == pytest.approx(expected[2])
    assert [i for i, _ in found.top] == [1, 3, 2] and found.top[0][1] == pytest.approx(expected[1])
    assert logprob(row, 0, top=0).top == ()


def test_generated_logprobs_are_the_decoders_own(decoder, tiny, codec):
    prompt = codec.encode("Hello")
    out = make_engine(decoder, tiny, codec).run({"x": (prompt, SamplingParams(max_tokens=8, logprobs=4,
                                                                              ignore_eos=True))})["x"]
    cache = KVCache.empty(decoder.geometry, len(prompt) + 10)
    row = decoder.step([Row(cache, prompt)])[0].copy()
    assert [lp.token for lp in out.logprobs] == out.generated and len(out.generated) == 8
    for token, found in zip(out.generated, out.logprobs):
        expected = row.astype(np.float64) - np.log(np.exp(row.astype(np.float64) - row.max()).sum()) - row.max()
        assert found.logprob == pytest.approx(expected[token], abs=1e-5)
        assert [i for i, _ in found.top] == list(np.argsort(-row, kind="stable")[:4])
        row = decoder.step([Row(cache, np.array([token]))])[0].copy()


def test_penalized_biased_and_logprob_rows_leave_the_rows_beside_them_as_alone(decoder, tiny, codec):
    free = SamplingParams(max_tokens=12, ignore_eos=True)
    alone = {i: make_engine(decoder, tiny, codec).run({i: (codec.encode(PROMPTS[i]), free)})[i].generated
             for i in range(3)}
    others = [SamplingParams(max_tokens=12, presence_penalty=2.0, frequency_penalty=1.0, ignore_eos=True),
              SamplingParams(max_tokens=12, logit_bias=((65, 100.0),), ignore_eos=True),
              SamplingParams(max_tokens=12, logprobs=20, temperature=1.0, seed=3, ignore_eos=True)]
    requests = {i: (codec.encode(PROMPTS[i]), free) for i in range(3)}
    requests |= {f"o{j}": (codec.encode(PROMPTS[5]), p) for j, p in enumerate(others)}
    together = make_engine(decoder, tiny, codec).run(requests)
    assert {i: together[i].generated for i in range(3)} == alone
    assert together["o1"].generated == [65] * 12   # a bias of 100 decides every token


def test_bad_values_are_named(decoder, tiny, codec):
    with pytest.raises(ValueError, match=r"logit_bias token ids must be in \[0, "):
        make_engine(decoder, tiny, codec).admit("x", codec.encode("Hi"), SamplingParams(logit_bias=((10**6, 1.0),)))
    for params, message in [(SamplingParams(presence_penalty=3.0), "presence_penalty must be in"),
                            (SamplingParams(logit_bias=((1, 200.0),)), "logit_bias takes"),
                            (SamplingParams(logprobs=21), "logprobs must be in")]:
        with pytest.raises(ValueError, match=message):
            params.validate()
    with pytest.raises(ValueError, match="logit_bias_ids .* must be as long"):
        sampling_params({"logit_bias_ids": np.array([1, 2])}, {"logit_bias_values": [1.0]})
    parsed = sampling_params({"logit_bias_ids": np.array([4]), "logit_bias_values": np.array([-2.5], np.float32)},
                             {"presence_penalty": "0.5", "logprobs": 3})
    assert (parsed.logit_bias, parsed.presence_penalty, parsed.logprobs) == (((4, -2.5),), 0.5, 3)


def test_logprob_outputs_are_a_row_a_token():
    outputs = logprob_outputs([Logprob(5, -0.1, ((5, -0.1), (7, -2.0))), Logprob(9, -1.5, ((2, -0.5), (9, -1.5)))],
                              batched=True)
    assert outputs["token_logprobs"].shape == (1, 2) and outputs["top_logprob_ids"].tolist() == [[[5, 7], [2, 9]]]
    assert outputs["top_logprobs"].shape == (1, 2, 2)
    assert logprob_outputs([], batched=False)["top_logprobs"].shape == (0, 0)


def test_prompt_logprobs_are_the_decoders_own_and_change_nothing_beside(decoder, tiny, codec):
    prompt = codec.encode("Hello world, again")
    free = SamplingParams(max_tokens=6, ignore_eos=True)
    alone = make_engine(decoder, tiny, codec).run({"x": (prompt, free)})["x"].generated
    engine = make_engine(decoder, tiny, codec, prefill_chunk=16)
    out = engine.run({"x": (prompt, free), "p": (prompt, SamplingParams(max_tokens=6, prompt_logprobs=2,
                                                                        ignore_eos=True))})
    assert out["x"].generated == alone == out["p"].generated
    found = out["p"].prompt_logprobs
    assert len(found) == len(prompt) and found[0] is None
    cache = KVCache.empty(decoder.geometry, len(prompt) + 2)
    for i, lp in enumerate(found[1:]):
        row = decoder.step([Row(cache, prompt[i:i + 1])])[0].astype(np.float64)
        total = row.max() + np.log(np.exp(row - row.max()).sum())
        assert lp is not None and lp.token == prompt[i + 1] and lp.logprob == pytest.approx(row[prompt[i + 1]] - total)
        assert [t for t, _ in lp.top] == list(np.argsort(-row, kind="stable")[:2])


def test_the_end_token_that_stops_a_generation_keeps_its_logprob_apart(decoder, tiny, codec):
    prompt = codec.encode("Hello")
    free = make_engine(decoder, tiny, codec).run({"x": (prompt, SamplingParams(max_tokens=8, logprobs=2,
                                                                               ignore_eos=True))})["x"]
    assert free.end is None   # ended by length
    k = next(i for i in range(1, 8) if free.generated[i] not in free.generated[:i])
    stopped = SamplingParams(max_tokens=8, logprobs=2, ignore_eos=True, stop_token_ids=(free.generated[k],))
    out = make_engine(decoder, tiny, codec).run({"x": (prompt, stopped)})["x"]
    assert out.finish_reason == "stop" and out.generated == free.generated[:k] and out.logprobs == free.logprobs[:k]
    assert out.end == free.logprobs[k]   # its id, its logprob under the raw row, its alternatives; not generated
    unasked = make_engine(decoder, tiny, codec).run({"x": (prompt, replace(stopped, logprobs=None))})["x"]
    assert unasked.generated == out.generated and unasked.end is None
