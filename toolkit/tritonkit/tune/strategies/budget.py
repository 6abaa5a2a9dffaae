"""What every walk over the knobs shares: each distinct configuration measured once within a budget, and when one
measurement beats another (constraints first, then the objective, past a noise margin)."""
from collections.abc import Callable
from dataclasses import dataclass, field

from tritonkit.tune.options import Constraints, Objective
from tritonkit.tune.results.measurements import Measurement
from tritonkit.tune.results.winner import meets
from tritonkit.tune.space.knobs import Knob, Point, normalize, point_id

#: A move must gain more than this (relative) to count: less is within a noisy machine's spread.
NOISE_MARGIN = 0.03


Measure = Callable[[Point], Measurement | None]  # None: the candidate could not be served or measured


@dataclass
class Trace:
    """Every configuration measured, in order (None where it failed), and how the search ended."""

    measured: list[tuple[Point, Measurement | None]] = field(default_factory=list)
    budget_hit: bool = False
    passes: int = 0


def better(a: Measurement | None, b: Measurement | None, objective: Objective, constraints: Constraints,
           margin: float = NOISE_MARGIN) -> bool:
    """Whether `a` beats `b` by more than the margin: meeting the constraints first, then the objective."""
    if a is None:
        return False
    if b is None:
        return True
    a_ok, b_ok = meets(a, constraints), meets(b, constraints)
    if a_ok != b_ok:
        return a_ok
    if objective == "latency" or not a_ok:  # out of bounds: closer to the latency bound is better
        return a.p99_ms < b.p99_ms * (1 - margin)
    return a.throughput > b.throughput * (1 + margin)


class Budgeted:
    """Measures each distinct configuration once, counting against the budget."""

    def __init__(self, measure: Measure, budget: int, knobs: list[Knob]) -> None:
        self.measure, self.budget, self.knobs, self.trace = measure, budget, knobs, Trace()
        self.cache: dict[tuple, Measurement | None] = {}

    def __call__(self, point: Point) -> tuple[bool, Measurement | None]:
        """(measured or cached, score); (False, None) once the budget is spent."""
        point = normalize(point, self.knobs)
        key = point_id(point)
        if key in self.cache:
            return True, self.cache[key]
        if len(self.trace.measured) >= self.budget:
            self.trace.budget_hit = True
            return False, None
        score = self.measure(point)
        self.cache[key] = score
        self.trace.measured.append((point, score))
        return True, score
