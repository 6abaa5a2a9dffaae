"""Drafted tokens for speculative decoding, from the text itself: the longest recent n-gram of a sequence (its
last few tokens) is looked up earlier in the prompt and the generated text, and the tokens that followed it there
are the draft. No second model: it pays where an answer repeats what it was given (quoting, extracting, editing,
summarizing a passage, code) and costs little elsewhere, since a row without a match drafts nothing.

The engine verifies a draft in the row's next decoder call and keeps the drafted tokens its own choice agrees with
(`engine.Engine._advance`). How many tokens a step verifies is a trade: a call's time grows with the tokens it runs
(`CallCost`, learned from the engine's own calls), and a drafted token pays only when it and those before it are
accepted, which each request's record predicts (`Drafter.rate`, starting from the engine's record). `width` picks
the draft length that yields the most tokens per unit of time, which is none when the batch is large (every row
pads to the longest) or the drafts keep missing.
"""
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: The n-gram lengths looked up, longest first: a longer match predicts better, a shorter one matches more often.
NGRAMS = (4, 3, 2)
#: What a call's time grows by a token, in one-token calls, until the engine has timed its own calls: onnxruntime's
#: int4 kernels on 2 Xeon cores, SmolLM2-135M (0.26-0.42; benchmarks/llm_spec.py prints the table).
TOKEN_COST = 0.42
#: How much the latest call moves the learned call times (an exponential moving average).
CALL_WEIGHT = 0.05
#: A request's acceptance rate before it has a record counts as this many verifications at the engine's rate.
PRIOR_TRIALS = 2


def lookup(sequence: np.ndarray, count: int, ngrams: tuple[int, ...] = NGRAMS) -> np.ndarray:
    """Up to `count` tokens that followed the latest earlier occurrence of the sequence's last n tokens (the first
    n of `ngrams` that occurs), or none."""
    if count < 1 or len(sequence) < 2:
        return sequence[:0]
    ends = np.flatnonzero(sequence[:-1] == sequence[-1])  # where an earlier n-gram could end: the last token again
    for n in (n for n in ngrams if n < len(sequence)):
        found = ends[ends >= n - 1]
        for back in range(1, n):
            found = found[sequence[found - back] == sequence[-1 - back]]
        if found.size:
            after = int(found[-1]) + 1
            return sequence[after:after + count]
    return sequence[:0]


@dataclass
class CallCost:
    """A decoder call's time by the tokens it runs (rows x padded width), in calls of one token: the moving average
    of one-token calls' times, and of what each token beyond the first added in longer calls."""

    single: float | None = None
    per_token: float | None = None

    def observe(self, tokens: int, seconds: float) -> None:
        if tokens == 1:
            self.single = _moved(self.single, seconds)
        elif self.single is not None:
            self.per_token = _moved(self.per_token, (seconds - self.single) / (tokens - 1))

    def relative(self, tokens: int) -> float:
        """The time of a call of `tokens` tokens over a one-token call's (never under 1)."""
        grows = TOKEN_COST
        if self.single and self.per_token is not None:
            grows = max(0.0, self.per_token / self.single)
        return max(1.0, 1.0 + grows * (tokens - 1))


def _moved(average: float | None, sample: float) -> float:
    return sample if average is None else average + CALL_WEIGHT * (sample - average)


def expected_tokens(rate: float, drafted: int) -> float:
    """Tokens a verification yields on average: the drafted ones kept (each kept with probability `rate` after
    those before it were) and the one chosen after them."""
    return sum(rate ** i for i in range(drafted + 1))


def width(rows: Sequence[tuple[float, int]], limit: int, cost: CallCost) -> int:
    """The tokens each row runs in a step of decoding rows (1 + drafted), given each row's (acceptance rate, tokens
    it has drafted): the width, up to `limit` + 1, with the most tokens expected per unit of time, rows padded to it."""
    def gain(w: int) -> float:
        return sum(expected_tokens(rate, min(w - 1, drafted)) for rate, drafted in rows) / cost.relative(len(rows) * w)
    return max(range(1, limit + 2), key=lambda w: (gain(w), -w))


def worth_drafting(rows: int, limit: int, cost: CallCost) -> bool:
    """Whether drafts could pay in a step of `rows` decoding rows were every drafted token kept: when not (a large
    batch), no lower rate pays either, and the step skips the lookups."""
    return width([(1.0, limit)] * rows, limit, cost) > 1


@dataclass
class Drafter:
    """A drafting record (a request's, or the engine's over all): drafted tokens verified, and of those accepted; a
    verification that did not keep every drafted token counts one miss. `prior`: the rate before any record."""

    prior: float = 0.5
    drafted: int = 0
    accepted: int = 0
    misses: int = 0

    @property
    def rate(self) -> float:
        """How likely the next drafted token is kept, once those before it were."""
        return (self.accepted + self.prior * PRIOR_TRIALS) / (self.accepted + self.misses + PRIOR_TRIALS)

    def verified(self, drafted: int, accepted: int) -> None:
        self.drafted += drafted
        self.accepted += accepted
        self.misses += accepted < drafted
