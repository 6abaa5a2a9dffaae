"""The generation loop: admit requests, run batched steps, sample, stop, free. No Triton in here.

`Engine.step(keys)` is one in-flight batching step: every listed generation advances by one token; those
that still need their prompt run it in the same step (prefill and decode share the step, and share one
decoder call when padding is cheap, see `plan_calls`). The Triton adapter calls it once per `execute`
with the requests Triton scheduled; tests and benchmarks call it in a loop.
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .decoder import OnnxDecoder, Row
from .kv_cache import KVCache, KVCachePool
from .sampling import Sampler, SamplingParams
from .text import Decode, visible_text

#: Finish reasons, as the `finish_reason` output spells them.
STOP, LENGTH, CANCELLED = "stop", "length", "cancelled"


class GenerationLimitError(ValueError):
    """A new request arrived while `max_streams` generations are live (refused, not queued)."""


@dataclass
class Generation:
    """One request in flight."""

    key: Hashable
    prompt: np.ndarray
    params: SamplingParams
    sampler: Sampler
    cache: KVCache
    stop_ids: frozenset[int]
    pending: np.ndarray
    generated: list[int] = field(default_factory=list)
    finish_reason: str | None = None


@dataclass
class StepOutput:
    """What one step produced for one generation: at most one new token, and whether it finished."""

    key: Hashable
    token_ids: list[int]
    generated: list[int]
    finish_reason: str | None
    stop: tuple[str, ...] = ()


def plan_calls(lengths: Sequence[int], call_cost: int) -> list[list[int]]:
    """Groups row indexes into decoder calls: one call when padding every row to the longest costs less
    than a second call (`call_cost` is a call's fixed cost in token-equivalents), else decodes apart."""
    if not lengths:
        return []
    longest = max(lengths)
    short = [i for i, n in enumerate(lengths) if n == 1]
    long = [i for i, n in enumerate(lengths) if n > 1]
    if not short or not long:
        return [list(range(len(lengths)))]
    mixed = len(lengths) * longest
    split = len(long) * longest + len(short) + call_cost
    return [list(range(len(lengths)))] if mixed <= split else [long, short]


class Engine:
    """Generations keyed by request id over one decoder and one KV-cache pool."""

    def __init__(self, decoder: OnnxDecoder, pool: KVCachePool, eos_token_ids: Iterable[int], max_context: int,
                 decode: Decode | None = None, max_tokens_limit: int | None = None, call_cost: int = 32,
                 max_streams: int = 0) -> None:
        self.decoder = decoder
        self.pool = pool
        self.eos_token_ids = frozenset(int(i) for i in eos_token_ids)
        self.max_context = int(max_context)
        self.decode = decode
        self.max_tokens_limit = max_tokens_limit
        self.call_cost = call_cost
        self.max_streams = max_streams  # live generations at most; 0 = bounded by the KV budget only
        self.generations: dict[Hashable, Generation] = {}
        self.calls = 0

    def __contains__(self, key: Hashable) -> bool:
        return key in self.generations

    def admit(self, key: Hashable, prompt_ids: Sequence[int] | np.ndarray, params: SamplingParams) -> Generation:
        """Checks the request and reserves its cache; ValueError or CacheBudgetError say why it cannot run."""
        if key in self.generations:
            raise ValueError(f"request {key!r} is already generating")
        if self.max_streams and len(self.generations) >= self.max_streams:
            raise GenerationLimitError(f"{len(self.generations)} generations are live, the limit (max_streams) is "
                                       f"{self.max_streams}; retry when one ends, or raise the model's max_streams parameter")
        prompt = np.asarray(prompt_ids, dtype=np.int64).reshape(-1)
        params.validate(self.max_tokens_limit)
        if prompt.size == 0:
            raise ValueError("the prompt is empty: send at least one token")
        vocab = self.decoder.vocab_size
        if prompt.min() < 0 or prompt.max() >= vocab:
            raise ValueError(f"prompt token ids must be in [0, {vocab}), got {int(prompt.min())}..{int(prompt.max())}")
        if params.stop and self.decode is None:
            raise ValueError("stop strings need the tokenizer, which this model has not loaded")
        positions = prompt.size + params.max_tokens
        if positions > self.max_context:
            raise ValueError(f"prompt ({prompt.size} tokens) + max_tokens ({params.max_tokens}) = {positions} exceeds the "
                             f"model's context of {self.max_context} tokens; shorten the prompt or lower max_tokens")
        cache = self.pool.allocate(key, positions, f"prompt {prompt.size} + max_tokens {params.max_tokens} tokens")
        stop_ids = frozenset(params.stop_token_ids) | (frozenset() if params.ignore_eos else self.eos_token_ids)
        generation = Generation(key, prompt, params, Sampler(params), cache, stop_ids, pending=prompt)
        self.generations[key] = generation
        return generation

    def cancel(self, key: Hashable) -> StepOutput | None:
        """Stops a generation and frees its cache; None when it was not running."""
        generation = self.generations.pop(key, None)
        if generation is None:
            return None
        self.pool.free(key)
        generation.finish_reason = CANCELLED
        return StepOutput(key, [], list(generation.generated), CANCELLED, generation.params.stop)

    def expire_idle(self, idle_s: float) -> list[Hashable]:
        """Frees generations untouched for `idle_s` seconds (their requests were dropped); returns their keys."""
        stale = [k for k in self.pool.idle(idle_s) if k in self.generations]
        for key in stale:
            self.cancel(key)
        return stale

    def step(self, keys: Sequence[Hashable]) -> list[StepOutput]:
        """Advances each listed generation by one token (prefilling those that are new)."""
        generations = [self.generations[k] for k in keys]
        if not generations:
            return []
        logits = np.empty((len(generations), self.decoder.vocab_size), np.float32)
        for group in plan_calls([len(g.pending) for g in generations], self.call_cost):
            logits[group] = self.decoder.step([Row(generations[i].cache, generations[i].pending) for i in group])
            self.calls += 1
        return [self._advance(g, row) for g, row in zip(generations, logits)]

    def _advance(self, generation: Generation, logits: np.ndarray) -> StepOutput:
        token = generation.sampler.choose(logits)
        params = generation.params
        emitted: list[int] = []
        if token in generation.stop_ids:
            generation.finish_reason = STOP
        else:
            generation.generated.append(token)
            emitted.append(token)
            generation.pending = np.array([token], np.int64)
            if params.stop and self.decode is not None and visible_text(self.decode, generation.generated, params.stop)[1]:
                generation.finish_reason = STOP
            elif len(generation.generated) >= params.max_tokens:
                generation.finish_reason = LENGTH
        if generation.finish_reason is not None:
            del self.generations[generation.key]
            self.pool.free(generation.key)
        return StepOutput(generation.key, emitted, list(generation.generated), generation.finish_reason, params.stop)

    def run(self, requests: dict[Hashable, tuple[Sequence[int], SamplingParams]]) -> dict[Hashable, StepOutput]:
        """Admits every request and steps them all together until each finishes (in-process use)."""
        for key, (prompt, params) in requests.items():
            self.admit(key, prompt, params)
        last: dict[Hashable, StepOutput] = {}
        while any(k in self.generations for k in requests):
            for out in self.step([k for k in requests if k in self.generations]):
                last[out.key] = out
        return last
