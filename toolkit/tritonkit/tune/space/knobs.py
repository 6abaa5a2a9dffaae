"""The search space as points: a knob is one setting of one step with the values to try, a point one value per knob.

Every strategy walks the same space (`strategies/`); `steps.py` says which knobs a pipeline's steps have and how a
point is written into their configs and back into the spec.
"""
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tritonkit.tune.targets.engine import engines

Key = tuple[str, str]  # (step, knob)
Point = dict[Key, Any]
#: The knobs of any step; an engine adds its own (`knob_names`).
STEP_KNOBS = ("instances", "queue_delay_us", "preferred", "threads")


def knob_names() -> tuple[str, ...]:
    """Every knob `--knobs` offers: the steps' and the installed engines'."""
    return tuple(dict.fromkeys([*STEP_KNOBS, *(n for e in engines().values() for n in e.knob_names)]))


@dataclass(frozen=True)
class Knob:
    """One setting of one step and the values the search may give it; `default` is the spec's own."""

    step: str
    name: str  # "instances", "queue_delay_us" (None: no dynamic batching), "preferred", "threads", or an engine's
    values: tuple[Any, ...]
    default: Any
    parameter: str | None = None   # the config `parameters` key the value is written to ("threads": its thread count)

    @property
    def key(self) -> Key:
        return (self.step, self.name)


def grid_size(knobs: list[Knob]) -> int:
    """How many distinct configurations `grid` yields (preferred sizes collapse where batching is off)."""
    total = 1
    for step in dict.fromkeys(k.step for k in knobs):
        own = {k.name: k for k in knobs if k.step == step}
        size = math.prod(len(k.values) for name, k in own.items() if name not in ("queue_delay_us", "preferred"))
        delay, preferred = own.get("queue_delay_us"), own.get("preferred")
        sizes = len(preferred.values) if preferred else 1
        if delay is None:
            batching = sizes
        else:
            off = 1 if None in delay.values else 0
            batching = (len(delay.values) - off) * sizes + off
        total *= size * batching
    return total


def knob_rows(knobs: list[Knob]) -> list[dict[str, Any]]:
    """The knobs as `--json` and `--dry-run` show them."""
    return [{"step": k.step, "knob": k.name, "values": list(k.values), "default": k.default} for k in knobs]


def default_point(knobs: list[Knob]) -> Point:
    return {k.key: k.default for k in knobs}


def normalize(point: Point, knobs: list[Knob]) -> Point:
    """Preferred sizes mean nothing without dynamic batching: such points are the same configuration."""
    out = dict(point)
    for knob in knobs:
        if knob.name == "preferred" and out.get((knob.step, "queue_delay_us"), 0) is None:
            out[knob.key] = knob.default
    return out


def point_id(point: Point) -> tuple[tuple[Key, Any], ...]:
    return tuple(sorted(point.items(), key=lambda item: item[0]))


def grid(knobs: list[Knob]) -> Iterator[Point]:
    """Every distinct configuration of the space (the brute-force baseline the descent is compared with)."""
    seen = set()
    for values in itertools.product(*(k.values for k in knobs)):
        point = normalize(dict(zip((k.key for k in knobs), values)), knobs)
        if point_id(point) not in seen:
            seen.add(point_id(point))
            yield point


def describe_point(point: Point, base: Point) -> str:
    """`decoder.instances=2, features.queue_delay_us=1000`: what differs from `base` ("default" when nothing)."""
    changed = [f"{step}.{knob}={value}" for (step, knob), value in sorted(point.items(), key=lambda i: i[0])
               if base.get((step, knob)) != value]
    return ", ".join(changed) or "default"
