"""The search's winner measured again against the spec's own configuration before it is written back.

One end-to-end measurement on a shared machine can be off by a fifth: SmolLM2's `llm` at a `max_batch_size` that
cannot change how 8 streams batch measured 189.9 tokens/s against the default's 150.5 in the search, then 138.6
against 155.7 in alternating rounds after it (benchmarks/pipeline_tune.py), far past the descent's noise margin. So
the winner and the default are served and measured again in alternating rounds, and the winner stands only if the
medians still put it ahead by that margin; otherwise the spec's own settings are kept.
"""
import statistics
from collections.abc import Callable

from tritonkit.tune.options import Constraints, Objective
from tritonkit.tune.results.measurements import Measurement
from tritonkit.tune.space.knobs import Point
from tritonkit.tune.strategies.budget import better

#: Serves and measures a point without recording it; the label heads its progress line. None: it failed.
Remeasure = Callable[[Point, str], Measurement | None]


def median_measurement(runs: list[Measurement]) -> Measurement:
    """One measurement of the runs' medians (throughput, p99, and an engine's TTFT and inter-token gap)."""
    first = runs[0]
    ttft = None if first.ttft_ms is None else statistics.median(m.ttft_ms or 0.0 for m in runs)
    itl = None if first.itl_ms is None else statistics.median(m.itl_ms or 0.0 for m in runs)
    return Measurement(first.variant, first.concurrency, statistics.median(m.throughput for m in runs),
                       statistics.median(m.p99_ms for m in runs), first.composing, ttft_ms=ttft, itl_ms=itl)


def _shown(m: Measurement) -> str:
    return f"{m.throughput:.1f}/s, p99 {m.p99_ms:.1f} ms"


def confirmed(winner: Point, default: Point, remeasure: Remeasure, rounds: int, objective: Objective,
              constraints: Constraints) -> tuple[bool, str]:
    """(whether `winner` still beats `default` over `rounds` alternating rounds, each going first in turn; a line
    saying what they measured). A winner that cannot be measured again does not stand; a default that cannot,
    does not block it."""
    runs: dict[str, list[Measurement]] = {"winner": [], "default": []}
    points = {"winner": winner, "default": default}
    for index in range(rounds):
        for name in ("default", "winner") if index % 2 == 0 else ("winner", "default"):
            found = remeasure(points[name], f"[confirm {index + 1}/{rounds}] {name}")
            if found is not None:
                runs[name].append(found)
    if not runs["winner"]:
        return False, "the search's winner could not be measured again: the spec's own settings are kept"
    if not runs["default"]:
        return True, "the spec's own configuration could not be measured again: the search's winner stands"
    mine, theirs = median_measurement(runs["winner"]), median_measurement(runs["default"])
    held = better(mine, theirs, objective, constraints)
    verdict = "the search's winner stands" if held else "the spec's own settings are kept"
    return held, (f"measured again in {rounds} alternating rounds (medians): the search's winner {_shown(mine)}, the "
                  f"spec's own {_shown(theirs)}: {verdict}")
