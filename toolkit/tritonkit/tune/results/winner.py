"""Chooses the winning configuration: the best measurement by the objective among those meeting the constraints.

Each configuration is judged by its best qualifying measurement (over the concurrencies measured), so a
configuration that wins only at a load the constraints forbid does not win.
"""
from dataclasses import dataclass

from tritonkit.errors import TritonkitError
from tritonkit.tune.options import Constraints, Objective
from tritonkit.tune.results.measurements import Measurement, TuneResults

DEFAULT_SUFFIX = "_config_default"


@dataclass(frozen=True)
class Ranked:
    """One configuration with its best measurement; `meets` is False when none of its measurements qualifies."""

    variant: str
    best: Measurement
    meets: bool

    @property
    def is_default(self) -> bool:
        return self.variant.endswith(DEFAULT_SUFFIX)


@dataclass(frozen=True)
class Choice:
    winner: Ranked
    default: Ranked | None
    runners_up: list[Ranked]
    ranking: list[Ranked]


def meets(m: Measurement, constraints: Constraints) -> bool:
    if constraints.max_p99_ms is not None and m.p99_ms > constraints.max_p99_ms:
        return False
    if constraints.min_throughput is not None and m.throughput < constraints.min_throughput:
        return False
    for bound, value in ((constraints.max_ttft_ms, m.ttft_ms), (constraints.max_itl_ms, m.itl_ms)):
        if bound is not None and (value is None or value > bound):
            return False
    return True


def sort_key(objective: Objective):
    """Higher throughput (ties: lower p99), or lower p99 (ties: higher throughput)."""
    if objective == "throughput":
        return lambda m: (-m.throughput, m.p99_ms)
    return lambda m: (m.p99_ms, -m.throughput)


def rank(results: TuneResults, objective: Objective, constraints: Constraints) -> list[Ranked]:
    """Every configuration, best first: those meeting the constraints ahead of those that do not."""
    key = sort_key(objective)
    ranked = []
    for variant, measurements in results.by_variant().items():
        good = [m for m in measurements if meets(m, constraints)]
        best = min(good or measurements, key=key)
        ranked.append(Ranked(variant, best, bool(good)))
    return sorted(ranked, key=lambda r: (not r.meets, key(r.best)))


def describe_limits(constraints: Constraints) -> str:
    """`p99 <= 50 ms and throughput >= 200 infer/s`; empty without constraints."""
    limits = ((constraints.max_p99_ms, "p99 <= {:g} ms"), (constraints.min_throughput, "throughput >= {:g} infer/s"),
              (constraints.max_ttft_ms, "p99 time to first token <= {:g} ms"),
              (constraints.max_itl_ms, "p99 inter-token gap <= {:g} ms"))
    return " and ".join(text.format(bound) for bound, text in limits if bound is not None)


def _relax_fix(measurements: list[Measurement], constraints: Constraints) -> str:
    fixes = []
    if constraints.max_p99_ms is not None:
        lowest = min(m.p99_ms for m in measurements)
        fixes.append(f"--max-p99-ms {lowest * 1.1:.0f} (lowest p99 measured: {lowest:.1f} ms)")
    if constraints.min_throughput is not None:
        highest = max(m.throughput for m in measurements)
        fixes.append(f"--min-throughput {highest * 0.9:.0f} (highest measured: {highest:.1f} infer/s)")
    for option, bound, values in (("--max-ttft-ms", constraints.max_ttft_ms, [m.ttft_ms for m in measurements]),
                                  ("--max-itl-ms", constraints.max_itl_ms, [m.itl_ms for m in measurements])):
        known = [v for v in values if v is not None]
        if bound is not None and known:
            fixes.append(f"{option} {min(known) * 1.1:.0f} (lowest measured: {min(known):.1f} ms)")
    return "relax the constraint, e.g. " + " or ".join(fixes)


def choose(results: TuneResults, objective: Objective, constraints: Constraints, log: str) -> Choice:
    """The winner, the default configuration and up to 3 runners-up; a clear error (located in Model Analyzer's
    `log`) when nothing qualifies."""
    ranking = rank(results, objective, constraints)
    if not ranking:
        raise TritonkitError(log, "results", "Model Analyzer recorded no measurement",
                             "read the Model Analyzer log named above and run tune again")
    if not ranking[0].meets:
        raise TritonkitError(
            log, "constraints",
            f"none of the {len(ranking)} configurations measured meets {describe_limits(constraints)}",
            _relax_fix(results.measurements, constraints))
    default = next((r for r in ranking if r.is_default), None)
    return Choice(ranking[0], default, ranking[1:4], ranking)
