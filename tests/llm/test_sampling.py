"""Sampling: greedy, temperature, top-k, top-p, seeds; and the request-parameter parsing around it."""
from __future__ import annotations

import numpy as np
import pytest

from tritonkit.pipelines.llm.runtime.requests import sampling_params
from tritonkit.pipelines.llm.runtime.sampling import (
    Sampler,
    SamplingParams,
    choose_token,
    filtered_probs,
)

LOGITS = np.log(np.array([0.05, 0.4, 0.3, 0.15, 0.1], dtype=np.float32))


def draws(params: SamplingParams, n: int = 4000, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([choose_token(LOGITS, params, rng) for _ in range(n)])


def test_greedy_is_argmax_and_draws_nothing():
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    assert choose_token(LOGITS, SamplingParams(temperature=0.0), rng) == 1
    assert choose_token(LOGITS, SamplingParams(temperature=2.0, top_k=1), rng) == 1
    assert rng.bit_generator.state == state


def test_temperature_one_follows_the_softmax():
    counts = np.bincount(draws(SamplingParams(temperature=1.0)), minlength=5) / 4000
    np.testing.assert_allclose(counts, [0.05, 0.4, 0.3, 0.15, 0.1], atol=0.03)


def test_low_temperature_sharpens_high_flattens():
    cold = np.bincount(draws(SamplingParams(temperature=0.3)), minlength=5) / 4000
    hot = np.bincount(draws(SamplingParams(temperature=5.0)), minlength=5) / 4000
    assert cold[1] > 0.6 and hot[1] < 0.3 and hot.min() > 0.1


def test_top_k_keeps_only_the_k_most_likely():
    assert set(draws(SamplingParams(temperature=1.0, top_k=2))) == {1, 2}
    probs = filtered_probs(LOGITS, SamplingParams(temperature=1.0, top_k=3))
    np.testing.assert_allclose(probs, np.array([0, 0.4, 0.3, 0.15, 0]) / 0.85, atol=1e-6)


def test_top_p_keeps_the_smallest_set_reaching_p():
    assert set(draws(SamplingParams(temperature=1.0, top_p=0.7))) == {1, 2}  # 0.4 + 0.3 reaches 0.7
    assert set(draws(SamplingParams(temperature=1.0, top_p=0.71))) == {1, 2, 3}
    assert set(draws(SamplingParams(temperature=1.0, top_p=0.1))) == {1}  # the top token always stays


def test_seed_reproduces_and_different_seeds_differ():
    logits = np.random.default_rng(5).standard_normal(100).astype(np.float32)
    params = SamplingParams(temperature=1.5, seed=42)
    first = [Sampler(params).choose(logits) for _ in range(1)]
    a, b = Sampler(params), Sampler(params)
    seq_a = [a.choose(logits) for _ in range(30)]
    seq_b = [b.choose(logits) for _ in range(30)]
    c = Sampler(SamplingParams(temperature=1.5, seed=43))
    assert seq_a == seq_b and seq_a[0] == first[0]
    assert [c.choose(logits) for _ in range(30)] != seq_a


@pytest.mark.parametrize("params, message", [
    (SamplingParams(max_tokens=0), "max_tokens must be >= 1"),
    (SamplingParams(temperature=-1), "temperature"),
    (SamplingParams(top_k=-2), "top_k"),
    (SamplingParams(top_p=0.0), "top_p"),
    (SamplingParams(top_p=1.5), "top_p"),
    (SamplingParams(seed=-1), "seed"),
    (SamplingParams(stop=("",)), "stop strings"),
])
def test_invalid_settings_are_named(params, message):
    with pytest.raises(ValueError, match=message):
        params.validate()


def test_max_tokens_limit():
    with pytest.raises(ValueError, match="above this server's limit 8"):
        SamplingParams(max_tokens=9).validate(max_tokens_limit=8)


def test_inputs_win_over_parameters_and_defaults_apply():
    inputs = {"max_tokens": np.array([5], np.int32), "stop": np.array([b"\n", b"END"], dtype=object),
              "seed": np.array([7], np.uint64)}
    params = sampling_params(inputs, {"max_tokens": 99, "temperature": 0.5, "top_k": "3", "stop_token_ids": [4, 5]}, 16)
    assert params == SamplingParams(max_tokens=5, temperature=0.5, top_k=3, seed=7, stop=("\n", "END"),
                                    stop_token_ids=(4, 5))
    assert sampling_params({}, {}, 16).max_tokens == 16
    assert sampling_params({}, {"stop": '["a", "b"]', "ignore_eos": "true"}).stop == ("a", "b")
    assert sampling_params({}, {"stop": "a"}).stop == ("a",)
    assert sampling_params({}, {"ignore_eos": True}).ignore_eos


@pytest.mark.parametrize("inputs, params, message", [
    ({"max_tokens": np.array([1, 2])}, {}, "must hold one value"),
    ({}, {"top_k": 2.5}, "'top_k' must be an integer"),
    ({}, {"temperature": "hot"}, "'temperature' must be a number"),
    ({}, {"ignore_eos": "maybe"}, "'ignore_eos' must be a boolean"),
])
def test_bad_request_values_are_named(inputs, params, message):
    with pytest.raises(ValueError, match=message):
        sampling_params(inputs, params)
