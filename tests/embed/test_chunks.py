"""How `encode` splits a dynamic batch: the runs it picks cost the least of every way to cut the sorted rows."""
from __future__ import annotations

import itertools
import random

from tritonkit.pipelines.embed.runtime.encode import CALL_COST_TOKENS, chunks


def cost(lengths: list[int], runs: list[tuple[int, int]]) -> int:
    return sum((end - start) * lengths[end - 1] + CALL_COST_TOKENS for start, end in runs)


def every_cut(n: int) -> list[list[tuple[int, int]]]:
    cuts = []
    for k in range(n):
        for inner in itertools.combinations(range(1, n), k):
            edges = [0, *inner, n]
            cuts.append(list(zip(edges, edges[1:])))
    return cuts


def test_the_runs_are_the_cheapest_cut_and_cover_every_row() -> None:
    rng = random.Random(7)
    for _ in range(200):
        lengths = sorted(rng.choice([rng.randint(3, 30), rng.randint(100, 256)]) for _ in range(rng.randint(1, 8)))
        runs = chunks(lengths)
        assert [i for start, end in runs for i in range(start, end)] == list(range(len(lengths)))
        assert cost(lengths, runs) == min(cost(lengths, cut) for cut in every_cut(len(lengths)))


def test_one_long_row_does_not_pad_the_short_ones() -> None:
    assert chunks([12] * 7 + [250]) == [(0, 7), (7, 8)]
    assert chunks([10, 12, 14, 16]) == [(0, 4)]   # alike lengths: one call
