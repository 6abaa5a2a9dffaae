"""Drafted tokens for speculative decoding, from the text itself: the longest recent n-gram of a sequence (its
last few tokens) is looked up earlier in the prompt and the generated text, and the tokens that followed it there
are the draft. No second model: it pays where an answer repeats what it was given (quoting, extracting, editing,
summarizing a passage, code) and costs little elsewhere, since a row without a match drafts nothing.

The engine verifies a draft in the row's next decoder call and keeps the drafted tokens its own choice agrees with
(`engine.Engine._advance`). How many tokens a step verifies is a trade: a call's time grows with the tokens it runs
(`call_cost`), and a drafted token pays only when it and those before it are accepted, which each request's own
record predicts (`Drafter.rate`). `width` picks the draft length that yields the most tokens per unit of time, which
is none when the batch is large (every row pads to the longest) or the drafts keep missing.
"""
import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: The n-gram lengths looked up, longest first: a longer match predicts better, a shorter one matches more often.
NGRAMS = (4, 3, 2)
#: A decoder call's time by the tokens it runs (all rows, padding included), relative to a call of one token:
#: from onnxruntime's int4 kernels on 2 Xeon cores, SmolLM2-135M (benchmarks/llm_spec.py prints the measured table):
#: a fixed 0.4 and 0.42 a token, no call under one token's.
FIXED_COST, TOKEN_COST = 0.4, 0.42
#: A request's acceptance rate before it has a record: as if one of two drafted tokens had been accepted.
PRIOR_ACCEPTED, PRIOR_TRIALS = 1, 2


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


def call_cost(tokens: int) -> float:
    """A decoder call's time for `tokens` tokens, in calls of one token."""
    return max(1.0, FIXED_COST + TOKEN_COST * tokens)


def expected_tokens(rate: float, drafted: int) -> float:
    """Tokens a verification yields on average: the drafted ones kept (each kept with probability `rate` after
    those before it were) and the one chosen after them."""
    return sum(rate ** i for i in range(drafted + 1))


def width(rows: Sequence[tuple[float, int]], limit: int) -> int:
    """The tokens each row runs in a step of decoding rows (1 + drafted), given each row's (acceptance rate, tokens
    it has drafted): the width, up to `limit` + 1, with the most tokens expected per unit of time, rows padded to it."""
    def gain(w: int) -> float:
        return sum(expected_tokens(rate, min(w - 1, drafted)) for rate, drafted in rows) / call_cost(len(rows) * w)
    return max(range(1, limit + 2), key=lambda w: (gain(w), -w))


@functools.cache
def worth_drafting(rows: int, limit: int) -> bool:
    """Whether drafts could pay in a step of `rows` decoding rows, were every drafted token accepted (else the
    lookups are skipped: a large batch)."""
    return width([(1.0, limit)] * rows, limit) > 1


@dataclass
class Drafter:
    """One request's drafting record: drafted tokens verified, and of those accepted; a verification that did not
    keep every drafted token counts one miss."""

    drafted: int = 0
    accepted: int = 0
    misses: int = 0

    @property
    def rate(self) -> float:
        """How likely the next drafted token is kept, once those before it were."""
        return (self.accepted + PRIOR_ACCEPTED) / (self.accepted + self.misses + PRIOR_TRIALS)

    def verified(self, drafted: int, accepted: int) -> None:
        self.drafted += drafted
        self.accepted += accepted
        self.misses += accepted < drafted
