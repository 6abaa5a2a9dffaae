"""Per-request sampling settings and next-token choice: greedy, temperature, top-k, top-p, seeded; OpenAI's presence
and frequency penalties and logit bias; log probabilities of the chosen tokens and their most likely alternatives.

Each request owns a numpy Generator seeded from its `seed`, so a seeded request draws the same tokens
whatever else shares its batch (the logits are the same up to float rounding; a draw is one uniform number
per step, taken only when the request samples).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from .grammar import Constraint

#: The most alternatives a token's log probabilities list (OpenAI's top_logprobs bound).
MAX_TOP_LOGPROBS = 20


@dataclass(frozen=True)
class SamplingParams:
    """What one request asks for; `validate` says what is wrong in one sentence."""

    max_tokens: int | None = None   # None: to the answer's end or the context's (the engine sets it at admission)
    temperature: float = 0.0
    top_k: int = 0
    top_p: float = 1.0
    seed: int | None = None
    stop: tuple[str, ...] = ()
    stop_token_ids: tuple[int, ...] = ()
    ignore_eos: bool = False
    constraint: Constraint | None = None  # the grammar the output must match (grammar.py)
    presence_penalty: float = 0.0   # subtracted from the logit of every token generated so far
    frequency_penalty: float = 0.0  # subtracted once per time a token was generated so far
    logit_bias: tuple[tuple[int, float], ...] = ()  # (token id, added to its logit)
    logprobs: int | None = None  # report each token's log probability and this many alternatives (None: none)
    prompt_logprobs: int | None = None  # the same for the prompt's tokens (computed a token a step)

    @property
    def greedy(self) -> bool:
        """Temperature 0 or top_k 1: the most likely token, no random draw."""
        return self.temperature <= 0.0 or self.top_k == 1

    def validate(self, max_tokens_limit: int | None = None) -> SamplingParams:
        """Returns self, or raises ValueError naming the bad parameter and the allowed range."""
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")
        if max_tokens_limit is not None and self.max_tokens is not None and self.max_tokens > max_tokens_limit:
            raise ValueError(f"max_tokens {self.max_tokens} is above this server's limit {max_tokens_limit}")
        if not (self.temperature >= 0.0 and np.isfinite(self.temperature)):
            raise ValueError(f"temperature must be a finite number >= 0, got {self.temperature}")
        if self.top_k < 0:
            raise ValueError(f"top_k must be >= 0 (0 = off), got {self.top_k}")
        if not (0.0 < self.top_p <= 1.0):
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.seed is not None and not (0 <= self.seed < 2**64):
            raise ValueError(f"seed must be in [0, 2**64), got {self.seed}")
        if any(not s for s in self.stop):
            raise ValueError("stop strings must be non-empty")
        for name, value in (("presence_penalty", self.presence_penalty), ("frequency_penalty", self.frequency_penalty)):
            if not -2.0 <= value <= 2.0:
                raise ValueError(f"{name} must be in [-2, 2], got {value}")
        bad = next(((i, b) for i, b in self.logit_bias if not (i >= 0 and -100.0 <= b <= 100.0)), None)
        if bad is not None:
            raise ValueError(f"logit_bias takes token ids >= 0 and biases in [-100, 100], got {bad[0]}: {bad[1]}")
        for name, top in (("logprobs", self.logprobs), ("prompt_logprobs", self.prompt_logprobs)):
            if top is not None and not 0 <= top <= MAX_TOP_LOGPROBS:
                raise ValueError(f"{name} must be in [0, {MAX_TOP_LOGPROBS}] (alternatives a token), got {top}")
        if self.constraint is not None and self.ignore_eos:
            raise ValueError(f"ignore_eos cannot be combined with {self.constraint.kind}: the output ends where its "
                             "grammar ends")
        return self


@dataclass
class Sampler:
    """Chooses tokens for one request; holds its random generator."""

    params: SamplingParams
    rng: np.random.Generator = field(init=False)

    def __post_init__(self) -> None:
        seed = self.params.seed if self.params.seed is not None else int.from_bytes(os.urandom(8), "little")
        self.rng = np.random.Generator(np.random.PCG64(seed))

    def choose(self, logits: np.ndarray) -> int:
        """The next token id from one row of logits [V]."""
        return choose_token(logits, self.params, self.rng)


def filtered_probs(logits: np.ndarray, params: SamplingParams) -> np.ndarray:
    """Probabilities after temperature, top-k and top-p (zeros outside the kept set), float64, summing to 1."""
    scaled = logits.astype(np.float64) / params.temperature
    if 0 < params.top_k < scaled.shape[-1]:
        kth = np.partition(scaled, -params.top_k)[-params.top_k]
        scaled = np.where(scaled >= kth, scaled, -np.inf)
    probs = np.exp(scaled - scaled.max())
    probs /= probs.sum()
    if params.top_p < 1.0:
        order = np.argsort(-probs, kind="stable")
        cumulative = np.cumsum(probs[order])
        keep = int(np.searchsorted(cumulative, params.top_p, side="left")) + 1  # smallest set reaching top_p
        kept = np.zeros_like(probs)
        kept[order[:keep]] = probs[order[:keep]]
        probs = kept / kept.sum()
    return probs


def adjust(logits: np.ndarray, params: SamplingParams, generated: list[int]) -> None:
    """Applies the penalties (over the tokens generated so far, as OpenAI defines them) and the logit bias to one
    row of logits, in place."""
    if (params.presence_penalty or params.frequency_penalty) and generated:
        ids, counts = np.unique(np.asarray(generated, np.int64), return_counts=True)
        logits[ids] -= (params.frequency_penalty * counts + params.presence_penalty).astype(np.float32)
    for token, bias in params.logit_bias:
        logits[token] += np.float32(bias)


@dataclass(frozen=True)
class Logprob:
    """A token's log probability under the model (its raw logits), and the `top` alternatives (id, logprob)."""

    token: int
    logprob: float
    top: tuple[tuple[int, float], ...] = ()


def logprob(logits: np.ndarray, token: int, top: int) -> Logprob:
    """Log-softmax of one row of raw logits at `token`, with the `top` most likely tokens (most likely first)."""
    row = logits.astype(np.float64)
    peak = row.max()
    total = peak + np.log(np.exp(row - peak).sum())
    best: tuple[tuple[int, float], ...] = ()
    if top:
        ids = np.argpartition(-row, top - 1)[:top] if top < row.size else np.arange(row.size)
        ids = ids[np.lexsort((ids, -row[ids]))]
        best = tuple((int(i), float(row[i] - total)) for i in ids)
    return Logprob(int(token), float(row[token] - total), best)


def choose_token(logits: np.ndarray, params: SamplingParams, rng: np.random.Generator) -> int:
    """Greedy argmax, or one draw from the filtered distribution."""
    if params.greedy:
        return int(np.argmax(logits))
    probs = filtered_probs(logits, params)
    cumulative = np.cumsum(probs)
    index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    return min(index, probs.shape[-1] - 1)
