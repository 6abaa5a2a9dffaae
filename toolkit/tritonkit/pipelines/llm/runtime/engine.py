"""The generation loop: admit requests, run batched steps, sample, stop, free. No Triton in here.

`Engine.step(keys)` is one in-flight batching step: every listed generation that is decoding advances by one token
(or more, with drafts: below), and prompts are prefilled in the same step in chunks (hybrid batching): at most
`prefill_chunk` prompt tokens per step over all prefilling generations, oldest first, so no step takes longer than
one chunk plus one token per decoding generation, whatever the prompt length (a step with a prefill drafts nothing).
A generation whose prompt is not fully in its cache yet gets no token from the step. Prefill and decode rows share
one decoder call when padding is cheap (see `plan_calls`). With a prefix cache (`pool.prefix`), a new prompt's
cached start is copied into its cache at admission and only the rest is prefilled; each prompt is remembered once
prefilled, and the whole sequence when its generation finishes (the next turn of a chat starts with it). The Triton
adapter calls `step` once per `execute` with the requests Triton scheduled; tests and benchmarks call it in a loop.

Speculative decoding (`draft_tokens` > 0): a decoding generation whose recent tokens occurred earlier in its prompt
or output (`drafts.lookup`) runs the tokens that followed there after its own in the same call, and the call gives
the logits after each. Its tokens are then chosen from those logits one by one exactly as without drafts (penalties,
grammar, stop strings, sampling with the request's own draws), and the drafted tokens are kept while they equal
what was chosen: the first difference is chosen in their place, and the cache drops the positions of the rest. So
the output is the same with drafts and without, greedy or seeded (the graph's logits for a token do not depend on
how many tokens share its call: see export/kv_graph.py), and each step yields one token or more per generation.
How many tokens a step drafts is what is expected to pay (drafts.py): in a full batch, none.
"""
import time
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from .decoder import OnnxDecoder, Row
from .drafts import CallCost, Drafter, lookup, width, worth_drafting
from .grammar import Grammars, Matcher
from .kv_cache import MIB, KVCache, KVCachePool
from .sampling import Logprob, Sampler, SamplingParams, adjust, logprob
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
    pending: np.ndarray  # ids not in the cache yet: the rest of the prompt, then the last sampled token (and the
                         # tokens drafted after it, while a step verifies them)
    reused: int = 0  # prompt positions copied from the prefix cache
    matcher: Matcher | None = None  # the request's grammar: masks its row of logits before each token
    drafter: Drafter | None = None  # drafts tokens to verify (speculative decoding); None: not for this one
    generated: list[int] = field(default_factory=list)
    logprobs: list[Logprob] = field(default_factory=list)  # of each generated token, when the request asks
    prompt_logprobs: list[Logprob | None] = field(default_factory=list)  # of each prompt token after the first
    finish_reason: str | None = None
    stepped_at: float = field(default_factory=time.monotonic)  # end of the last step that listed it (or admission):
                                                                # generate steps those waiting longest first


@dataclass
class StepOutput:
    """What one step produced for one generation: its new tokens (none while its prompt is prefilled, more than
    one when drafted tokens were accepted), and whether it finished."""

    key: Hashable
    token_ids: list[int]
    generated: list[int]
    finish_reason: str | None
    stop: tuple[str, ...] = ()
    logprobs: list[Logprob] = field(default_factory=list)  # of every generated token so far (when asked for)
    prompt_logprobs: list[Logprob | None] = field(default_factory=list)  # the prompt's, once prefilled (when asked)
    end: Logprob | None = None  # the end token (eos, a stop_token_id) the generation chose last, when logprobs are
                                # asked for: counted and listed as OpenAI's servers do, never in `generated`


def plan_calls(lengths: Sequence[int], call_cost: int, stores: Sequence[Hashable] | None = None) -> list[list[int]]:
    """Groups row indexes into decoder calls: one call when padding every row to the longest costs less
    than a second call (`call_cost` is a call's fixed cost in token-equivalents), else decodes apart; then each
    call by the store its cache lives in (`stores`: a call reads and writes the caches of one store in place, and
    copies rows of several)."""
    if not lengths:
        return []
    longest = max(lengths)
    short = [i for i, n in enumerate(lengths) if n == 1]
    long = [i for i, n in enumerate(lengths) if n > 1]
    if not short or not long:
        groups = [list(range(len(lengths)))]
    else:
        mixed = len(lengths) * longest
        split = len(long) * longest + len(short) + call_cost
        groups = [list(range(len(lengths)))] if mixed <= split else [long, short]
    if stores is None:
        return groups
    return [[i for i in group if stores[i] == store]
            for group in groups for store in dict.fromkeys(stores[i] for i in group)]


class Engine:
    """Generations keyed by request id over one decoder and one KV-cache pool."""

    def __init__(self, decoder: OnnxDecoder, pool: KVCachePool, eos_token_ids: Iterable[int], max_context: int,
                 decode: Decode | None = None, max_tokens_limit: int | None = None, call_cost: int = 32,
                 max_streams: int = 0, prefill_chunk: int = 0, grammars: Grammars | None = None,
                 draft_tokens: int = 0) -> None:
        self.decoder = decoder
        self.pool = pool
        self.eos_token_ids = frozenset(int(i) for i in eos_token_ids)
        self.max_context = int(max_context)
        self.decode = decode
        self.max_tokens_limit = max_tokens_limit
        self.call_cost = call_cost
        self.max_streams = max_streams  # live generations at most; 0 = bounded by the KV budget only
        self.prefill_chunk = prefill_chunk  # prompt tokens per step over all prefills; 0 = whole prompts at once
        self.grammars = grammars  # compiles requests' constraints (None: constrained requests are refused)
        # most tokens a generation drafts a step (0: no speculative decoding, as with a graph that cannot verify)
        self.draft_tokens = draft_tokens if decoder.verifies else 0
        self.drafts = Drafter()  # every request's drafts together: a new request's starting rate
        self.call_times = CallCost()  # the decoder's call times by tokens, as this engine has seen them
        self.generations: dict[Hashable, Generation] = {}
        self.calls = 0
        self.prefilled_tokens = 0  # prompt positions run through the decoder (not reused), since the start

    def __contains__(self, key: Hashable) -> bool:
        return key in self.generations

    def room(self, prompt_tokens: int) -> int:
        """max_tokens of a request that names none, as OpenAI's and vLLM's servers take it: the rest of the context
        (within max_tokens_limit and what the whole KV budget holds; at least 1, which admit refuses if it does not
        fit)."""
        positions = min(self.max_context, self.pool.budget_bytes // self.pool.bytes_for(1))
        return max(1, min(positions - prompt_tokens, self.max_tokens_limit or positions))

    def admit(self, key: Hashable, prompt_ids: Sequence[int] | np.ndarray, params: SamplingParams) -> Generation:
        """Checks the request and reserves its cache; ValueError or CacheBudgetError say why it cannot run."""
        if key in self.generations:
            raise ValueError(f"request {key!r} is already generating")
        if self.max_streams and len(self.generations) >= self.max_streams:
            raise GenerationLimitError(f"{len(self.generations)} generations are live, the limit (max_streams) is "
                                       f"{self.max_streams}; retry when one ends, or raise the model's max_streams "
                                       "parameter")
        prompt = np.asarray(prompt_ids, dtype=np.int64).reshape(-1)
        params.validate(self.max_tokens_limit)
        if prompt.size == 0:
            raise ValueError("the prompt is empty: send at least one token")
        vocab = self.decoder.vocab_size
        if prompt.min() < 0 or prompt.max() >= vocab:
            raise ValueError(f"prompt token ids must be in [0, {vocab}), got {int(prompt.min())}..{int(prompt.max())}")
        if params.stop and self.decode is None:
            raise ValueError("stop strings need the tokenizer, which this model has not loaded")
        if params.logit_bias and max(i for i, _ in params.logit_bias) >= vocab:
            raise ValueError(f"logit_bias token ids must be in [0, {vocab}), got "
                             f"{max(i for i, _ in params.logit_bias)}")
        if params.constraint is not None and self.grammars is None:
            raise ValueError(f"{params.constraint.kind} needs the tokenizer, which this model has not loaded")
        if prompt.size >= self.max_context:
            raise ValueError(f"the prompt has {prompt.size} tokens and the model's context holds {self.max_context} "
                             f"(prompt + generated); shorten the prompt to at most {self.max_context - 1} tokens")
        if params.max_tokens is None:
            params = replace(params, max_tokens=self.room(prompt.size))
        assert params.max_tokens is not None
        positions = prompt.size + params.max_tokens
        if positions > self.max_context:
            raise ValueError(f"prompt ({prompt.size} tokens) + max_tokens ({params.max_tokens}) = {positions} "
                             f"exceeds the model's context of {self.max_context} tokens; shorten the prompt or lower "
                             "max_tokens")
        need = self.pool.bytes_for(positions)
        if need > self.pool.budget_bytes:  # could never run, however long it waits: the client's error, not busy
            raise ValueError(f"prompt ({prompt.size} tokens) + max_tokens ({params.max_tokens}) need "
                             f"{need / MIB:.2f} MiB of KV cache, more than the whole budget of "
                             f"{self.pool.budget_bytes / MIB:.2f} MiB (kv_cache_bytes); shorten the prompt or lower "
                             "max_tokens, or raise the model's kv_cache_bytes parameter")
        matcher = self.grammars.matcher(params.constraint) if params.constraint and self.grammars else None
        prefix = self.pool.prefix
        # before allocating: it may evict blocks; a prompt whose log probabilities are asked for is computed whole
        match = prefix.match(prompt) if prefix is not None and params.prompt_logprobs is None else None
        cache = self.pool.allocate(key, positions, f"prompt {prompt.size} + max_tokens {params.max_tokens} tokens")
        reused = prefix.fill(match, cache) if prefix is not None and match is not None else 0
        stop_ids = frozenset(params.stop_token_ids) | (frozenset() if params.ignore_eos else self.eos_token_ids)
        generation = Generation(key, prompt, params, Sampler(params), cache, stop_ids, pending=prompt[reused:],
                                reused=reused, matcher=matcher,
                                drafter=Drafter(self.drafts.rate) if self.draft_tokens else None,
                                prompt_logprobs=[None] if params.prompt_logprobs is not None else [])
        self.generations[key] = generation
        return generation

    def cancel(self, key: Hashable) -> StepOutput | None:
        """Stops a generation and frees its cache; None when it was not running."""
        generation = self.generations.pop(key, None)
        if generation is None:
            return None
        self.pool.free(key)
        self._release_when_idle()
        generation.finish_reason = CANCELLED
        return StepOutput(key, [], list(generation.generated), CANCELLED, generation.params.stop)

    def chunks(self, generations: Sequence[Generation]) -> list[int]:
        """How many pending ids each generation runs this step: decodes their one token, prefills share the
        step's `prefill_chunk` prompt tokens in order (0 = sits this step out); a prompt whose log probabilities are
        asked for runs a token a step (the decoder gives the logits of each row's last token only)."""
        left = self.prefill_chunk or sum(len(g.pending) for g in generations)
        sizes = []
        for g in generations:
            if g.cache.length >= len(g.prompt):
                sizes.append(len(g.pending))  # decoding: its one token is never held back
                continue
            take = min(len(g.pending), left, 1 if g.params.prompt_logprobs is not None else left)
            left -= take
            sizes.append(take)
        return sizes

    def step(self, keys: Sequence[Hashable]) -> list[StepOutput]:
        """Advances each listed generation: one token for those decoding and for those whose prompt's last
        chunk runs now; a prefill that is not finished gets no token."""
        generations = [self.generations[k] for k in keys]
        sizes = self.chunks(generations)
        drafts = self._drafts(generations)
        sizes = [n + len(d) for n, d in zip(sizes, drafts)]
        prefilling = [g.cache.length < len(g.prompt) for g in generations]
        self.prefilled_tokens += sum(n for n, p in zip(sizes, prefilling) if p)
        running = [i for i, n in enumerate(sizes) if n]
        width = 1 + max((len(d) for d in drafts), default=0)
        logits = np.empty((len(generations), width, self.decoder.vocab_size), np.float32)
        stores = [id(generations[i].cache.store) for i in running]
        for group in plan_calls([sizes[i] for i in running], self.call_cost, stores):
            rows = [running[j] for j in group]
            started = time.perf_counter()
            tails = self.decoder.tails([Row(generations[i].cache, generations[i].pending[:sizes[i]],
                                            1 + len(drafts[i])) for i in rows])
            self.call_times.observe(len(rows) * max(sizes[i] for i in rows), time.perf_counter() - started)
            logits[rows, width - tails.shape[1]:] = tails   # right-aligned: each row's last token's logits last
            self.calls += 1
        outputs = []
        now = time.monotonic()
        for g, n, row, drafted, was_prefilling in zip(generations, sizes, logits, drafts, prefilling):
            g.stepped_at = now
            g.pending = g.pending[n:]
            if was_prefilling and g.cache.length >= len(g.prompt):
                self._remember(g.prompt, g.cache)
            elif was_prefilling and n and g.params.prompt_logprobs is not None:   # the next prompt token's odds
                g.prompt_logprobs.append(logprob(row[-1], int(g.prompt[g.cache.length]), g.params.prompt_logprobs))
            outputs.append(self._advance(g, row[width - 1 - len(drafted):], drafted) if not len(g.pending) else
                           StepOutput(g.key, [], list(g.generated), None, g.params.stop))
        self._release_when_idle()
        return outputs

    def _drafts(self, generations: Sequence[Generation]) -> list[np.ndarray]:
        """Each generation's drafted tokens this step (appended to its pending token): when every generation of the
        step decodes and has a drafter, as many as `drafts.width` finds worth verifying (none where that is one
        token a row)."""
        none = [np.empty(0, np.int64)] * len(generations)
        drafters = [g.drafter for g in generations
                    if g.drafter is not None and len(g.pending) == 1 and g.cache.length >= len(g.prompt)]
        if not generations or len(drafters) < len(generations) or \
                not worth_drafting(len(generations), self.draft_tokens, self.call_times):
            return none
        found = [lookup(np.concatenate([g.prompt, np.asarray(g.generated, np.int64)]),
                        min(self.draft_tokens, (g.params.max_tokens or self.max_context) - len(g.generated) - 1))
                 for g in generations]
        if not any(len(f) for f in found):
            return none
        chosen = width([(d.rate, len(f)) for d, f in zip(drafters, found)], self.draft_tokens, self.call_times)
        drafts = [f[:chosen - 1] for f in found]
        for g, draft in zip(generations, drafts):
            g.pending = np.concatenate([g.pending, draft])
        return drafts

    @property
    def drafted_tokens(self) -> int:
        """Drafted tokens verified, since the start."""
        return self.drafts.drafted

    @property
    def accepted_tokens(self) -> int:
        """Of those, the ones kept."""
        return self.drafts.accepted

    def _remember(self, ids: np.ndarray, cache: KVCache, finishing: bool = False) -> None:
        """Offers a sequence's filled cache to the prefix cache (within its budget and what the pool has free, this
        cache's reservation counted free when it is `finishing`: it is freed right after)."""
        if self.pool.prefix is not None:
            room = self.pool.free_bytes + (self.pool.bytes_for(cache.capacity) if finishing else 0)
            self.pool.prefix.insert(ids, cache, room)

    def _release_when_idle(self) -> None:
        """Nothing left to run: the decoder's call buffers go back (sized for the last calls, a long prompt's
        up to 140 MB for SmolLM2); the next request allocates what it needs."""
        if not self.generations:
            self.decoder.release()

    def _advance(self, generation: Generation, tails: np.ndarray, drafted: np.ndarray) -> StepOutput:
        """Chooses the generation's next tokens: from `tails[0]` (the logits after its pending token), then, while the
        token chosen equals the next drafted one, from the logits after that draft; the cache keeps the positions of
        the drafts kept. Then whether it finished."""
        emitted: list[int] = []
        end = None
        kept = 0
        for logits in tails:
            token, end = self._choose(generation, logits)
            if token is None:
                break
            emitted.append(token)
            if generation.finish_reason is not None or kept == len(drafted) or token != drafted[kept]:
                break
            kept += 1
        if generation.drafter is not None and len(drafted):
            generation.drafter.verified(len(drafted), kept)
            self.drafts.verified(len(drafted), kept)
        generation.cache.length -= len(drafted) - kept
        if generation.finish_reason is not None:
            del self.generations[generation.key]
            self._remember(np.concatenate([generation.prompt, np.asarray(generation.generated, np.int64)]),
                           generation.cache, finishing=True)
            self.pool.free(generation.key)  # after: a freed slot's pages are given back
        return StepOutput(generation.key, emitted, list(generation.generated), generation.finish_reason,
                          generation.params.stop, list(generation.logprobs), generation.prompt_logprobs, end)

    def _choose(self, generation: Generation, logits: np.ndarray) -> tuple[int | None, Logprob | None]:
        """Chooses one token from a row of logits (penalized, biased and masked by the grammar, in place: this row
        only) and records it, or the end: (the token, None), or (None, the end token's log probability when asked
        for: it is reported apart, not generated text). Sets the finish reason when the generation ends."""
        params, matcher = generation.params, generation.matcher
        raw = logits.copy() if params.logprobs is not None else None
        adjust(logits, params, generation.generated)
        ended = matcher is not None and not matcher.mask(logits)
        token = generation.sampler.choose(logits)
        if ended or token in generation.stop_ids:
            generation.finish_reason = STOP
            return None, logprob(raw, token, params.logprobs or 0) if not ended and raw is not None else None
        generation.generated.append(token)
        if raw is not None:
            generation.logprobs.append(logprob(raw, token, params.logprobs or 0))
        generation.pending = np.array([token], np.int64)
        if matcher is not None and matcher.advance(token):
            generation.finish_reason = STOP  # the grammar is complete: only an end token could follow
        elif (params.stop and self.decode is not None
                and visible_text(self.decode, generation.generated, params.stop)[1]):
            generation.finish_reason = STOP
        elif len(generation.generated) >= (params.max_tokens or self.max_context):   # set at admission
            generation.finish_reason = LENGTH
        return token, None

    def run(self, requests: dict[Hashable, tuple[Sequence[int], SamplingParams]]) -> dict[Hashable, StepOutput]:
        """Admits every request and steps them all together until each finishes (in-process use)."""
        for key, (prompt, params) in requests.items():
            self.admit(key, prompt, params)
        last: dict[Hashable, StepOutput] = {}
        while any(k in self.generations for k in requests):
            for out in self.step([k for k in requests if k in self.generations]):
                last[out.key] = out
        return last
