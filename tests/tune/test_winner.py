"""Winner selection on real measurements: objective, constraints, default and runners-up, clear failures."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tritonkit.errors import TritonkitError
from tritonkit.tune.analyzer.outputs import parse_checkpoint
from tritonkit.tune.options import Constraints
from tritonkit.tune.results.measurements import TuneResults
from tritonkit.tune.results.winner import choose, rank


@pytest.fixture(scope="module")
def batchy(recorded: Path) -> TuneResults:
    return parse_checkpoint(json.loads((recorded / "batchy" / "0.ckpt").read_text()), "batchy")


def test_throughput_objective_picks_the_highest_throughput(batchy: TuneResults) -> None:
    choice = choose(batchy, "throughput", Constraints(), "ma.log")
    top = max(batchy.measurements, key=lambda m: m.throughput)
    assert choice.winner.variant == top.variant == "batchy_config_4"
    assert choice.winner.best == top
    assert choice.default is not None and choice.default.variant == "batchy_config_default"
    assert choice.winner.variant not in {r.variant for r in choice.runners_up}
    assert len(choice.runners_up) == 3


def test_latency_constraint_excludes_faster_but_slower_to_answer_points(batchy: TuneResults) -> None:
    limit = 60.0
    choice = choose(batchy, "throughput", Constraints(max_p99_ms=limit), "ma.log")
    assert choice.winner.best.p99_ms <= limit
    allowed = [m for m in batchy.measurements if m.p99_ms <= limit]
    assert choice.winner.best.throughput == max(m.throughput for m in allowed)
    assert choice.winner.best.concurrency < 64  # the unconstrained winner's point (p99 96 ms) is out


def test_latency_objective_with_throughput_floor(batchy: TuneResults) -> None:
    floor = 100.0
    choice = choose(batchy, "latency", Constraints(min_throughput=floor), "ma.log")
    allowed = [m for m in batchy.measurements if m.throughput >= floor]
    assert choice.winner.best.p99_ms == min(m.p99_ms for m in allowed)


def test_ranking_puts_qualifying_configurations_first(batchy: TuneResults) -> None:
    ranking = rank(batchy, "throughput", Constraints(max_p99_ms=30.0))
    meets = [r.meets for r in ranking]
    assert meets == sorted(meets, reverse=True) and any(meets) and not all(meets)


def test_no_configuration_meets_the_constraint_names_a_relaxed_value(batchy: TuneResults) -> None:
    with pytest.raises(TritonkitError) as err:
        choose(batchy, "throughput", Constraints(max_p99_ms=1.0), "ma.log")
    lowest = min(m.p99_ms for m in batchy.measurements)
    line = err.value.line()
    assert "none of the 6 configurations measured meets p99 <= 1 ms" in line
    assert f"--max-p99-ms {lowest * 1.1:.0f}" in line and "\n" not in line


def test_unreachable_throughput_floor_is_explained(batchy: TuneResults) -> None:
    with pytest.raises(TritonkitError, match=r"throughput >= 100000 infer/s.*--min-throughput"):
        choose(batchy, "throughput", Constraints(min_throughput=100000), "ma.log")


def test_empty_results_are_an_error_not_an_empty_table() -> None:
    with pytest.raises(TritonkitError, match="recorded no measurement"):
        choose(TuneResults("m"), "throughput", Constraints(), "ma.log")
