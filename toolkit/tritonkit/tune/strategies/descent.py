"""Coordinate descent over a pipeline's knobs within a measurement budget.

Descent starts at the spec's own configuration and, knob after knob, measures the knob's other values with every
other knob where it stands; it moves to the best only when that beats the current point by more than the noise
margin, and passes over the knobs again until a pass moves nothing or the budget is spent. Steps interact (a
step's instances shift the load on the next), so a pass is repeated rather than each knob set once, and knobs that
tie on a plateau are tried together. A step's instances are also tried with its threads split between them (the same
cores, not n times the threads), a move that one knob at a time misses: each alone oversubscribes or starves it.
"""
import os

from tritonkit.tune.options import Constraints, Objective
from tritonkit.tune.results.measurements import Measurement
from tritonkit.tune.results.winner import sort_key
from tritonkit.tune.space.knobs import Key, Knob, Point, default_point, normalize, point_id
from tritonkit.tune.strategies.budget import Budgeted, Measure, Trace, better


def _neutral(tried: list[tuple[object, Measurement | None]], own: object, score: Measurement | None,
             objective: Objective, constraints: Constraints) -> tuple[bool, object]:
    """The knob's best value among those measuring as well as its current one (within the margin), if any."""
    key = sort_key(objective)
    ties = [(i, v, s) for i, (v, s) in enumerate(tried)
            if s is not None and v != own and not better(score, s, objective, constraints)]
    if not ties:
        return False, None
    return True, min(ties, key=lambda t: (key(t[2]), -t[0]))[1]


def _split_threads(knob: Knob, value: object, knobs: list[Knob], current: Point, cores: int) -> dict[Key, object]:
    """For `value` instances of a step with a threads knob: that knob at cores // value (when it offers it and it is
    not already there), so the instances share the cores; else nothing."""
    threads = next((k for k in knobs if k.step == knob.step and k.name == "threads"), None)
    if knob.name != "instances" or threads is None or not isinstance(value, int) or value == current[knob.key]:
        return {}
    split = max(1, cores // value)
    return {threads.key: split} if split in threads.values and split != current[threads.key] else {}


def coordinate_descent(knobs: list[Knob], measure: Measure, budget: int, objective: Objective,
                       constraints: Constraints, cores: int | None = None) -> tuple[Point, Trace]:
    """The best point found and every measurement; the spec's own configuration is always measured first.

    A pipeline runs at its slowest step's pace, so one step's knob alone often changes nothing (a plateau); when a
    pass moves nothing, the knobs that measured as well as their current values are moved together once. An
    instance count is also tried with the step's threads split between the instances (`cores`: this machine's)."""
    cores = cores or os.cpu_count() or 1
    run = Budgeted(measure, budget, knobs)
    current = normalize(default_point(knobs), knobs)
    _, current_score = run(current)
    while not run.trace.budget_hit:
        run.trace.passes += 1
        moved, neutral = False, {}
        for knob in knobs:
            best, best_score = current, current_score
            tried: list[tuple[object, Measurement | None]] = []
            candidates = [(value, {knob.key: value}) for value in knob.values]
            candidates += [(value, {knob.key: value, **split}) for value in knob.values
                           if (split := _split_threads(knob, value, knobs, current, cores))]
            for value, change in candidates:
                point = normalize({**current, **change}, knobs)
                done, score = run(point)
                if not done:
                    break
                if len(change) == 1:   # a paired move is not this knob's value alone: no plateau tie
                    tried.append((value, score))
                if better(score, best_score, objective, constraints):
                    best, best_score = point, score
            if point_id(best) != point_id(current):
                current, current_score, moved = best, best_score, True
            else:
                tie, value = _neutral(tried, current[knob.key], current_score, objective, constraints)
                if tie:
                    neutral[knob.key] = value
            if run.trace.budget_hit:
                break
        if moved:
            continue
        if len(neutral) < 2:
            break
        together = normalize({**current, **neutral}, knobs)
        done, score = run(together)
        if not (done and better(score, current_score, objective, constraints)):
            break
        current, current_score = together, score
    return current, run.trace
