"""The search space of one model, derived from its spec and the host: instance counts, max batch sizes,
dynamic-batching delays and preferred sizes, and the concurrency range perf_analyzer sweeps.

Quick mode lets Model Analyzer walk instance counts and max batch sizes (powers of two) itself and keeps the
queue delay fixed; brute mode lists every value and Model Analyzer measures each combination, so brute mode
is trimmed until its estimated time fits the budget.
"""
import os
from dataclasses import dataclass, field

from tritonkit.spec.model import ModelSpec

#: Queue delays brute mode tries besides the spec's own (microseconds).
BRUTE_DELAYS_US = (0, 500, 2000)
#: Rough cost of one brute-mode measurement (model reload + perf_analyzer windows), for budget trimming.
SECONDS_PER_MEASUREMENT = 12.0
#: Concurrencies Model Analyzer sweeps per configuration in brute mode (it stops once throughput drops).
SWEEP_STEPS_ESTIMATE = 4


@dataclass(frozen=True)
class ModelSpace:
    """Values to search for one model; empty batch lists mean the model does not batch."""

    name: str
    instance_counts: tuple[int, ...]
    max_batch_sizes: tuple[int, ...] = ()
    delays_us: tuple[int, ...] = ()
    preferred_sizes: tuple[tuple[int, ...], ...] = ()

    @property
    def batches(self) -> bool:
        return bool(self.max_batch_sizes)

    def combinations(self) -> int:
        n = len(self.instance_counts)
        if self.batches:
            n *= len(self.max_batch_sizes) * max(1, len(self.delays_us)) * max(1, len(self.preferred_sizes))
        return n


@dataclass(frozen=True)
class SearchSpace:
    """Per-model spaces plus the concurrency range; `notes` say what was trimmed and why."""

    models: dict[str, ModelSpace]
    min_concurrency: int
    max_concurrency: int
    notes: tuple[str, ...] = field(default_factory=tuple)


def default_max_instances(gpu: bool) -> int:
    """CPU instances beyond the core count only fight over cores; GPUs take a few copies well."""
    return 4 if gpu else max(2, min(4, os.cpu_count() or 1))


def powers_of_two(low: int, high: int) -> tuple[int, ...]:
    """The powers of two from `low` up to `high`, then `high` itself."""
    values = [2**k for k in range(high.bit_length()) if 2**k >= low]
    return tuple(values + [high] if high not in values and high >= low else values)


def default_max_batch(spec: ModelSpec) -> int:
    """Twice the spec's max batch size (at least 16): room to find that larger batches pay off."""
    return max(16, 2 * spec.max_batch_size)


def spec_delay(spec: ModelSpec) -> int:
    """The spec's own queue delay, 0 when it has no dynamic batching."""
    return spec.dynamic_batching.max_queue_delay_microseconds if spec.dynamic_batching else 0


def model_space(name: str, spec: ModelSpec, mode: str, gpu: bool, max_instances: int | None,
                max_batch: int | None) -> ModelSpace:
    """The values to try for one model (a model with max_batch_size 0 only varies its instance count)."""
    top_instances = max_instances or default_max_instances(gpu)
    counts = tuple(range(1, top_instances + 1))
    if spec.max_batch_size == 0:
        return ModelSpace(name, counts)
    top_batch = max_batch or default_max_batch(spec)
    if mode == "quick":
        return ModelSpace(name, counts, powers_of_two(1, top_batch), (spec_delay(spec),), ((),))
    sizes = powers_of_two(4 if top_batch >= 4 else 1, top_batch)
    delays = tuple(sorted({*BRUTE_DELAYS_US, spec_delay(spec)}))
    # a preferred size must not exceed any max batch size tried with it
    preferred: tuple[tuple[int, ...], ...] = ((), (min(sizes),)) if min(sizes) >= 4 else ((),)
    return ModelSpace(name, counts, sizes, delays, preferred)


def _trim(space: ModelSpace) -> ModelSpace:
    """Drops one value from the dimension with the most choices (largest delay, smallest batch, most instances)."""
    dims = {"delays_us": space.delays_us, "max_batch_sizes": space.max_batch_sizes,
            "instance_counts": space.instance_counts, "preferred_sizes": space.preferred_sizes}
    name, values = max(dims.items(), key=lambda kv: len(kv[1]))
    if len(values) <= 1:
        return space
    kept = values[:-1] if name in ("delays_us", "instance_counts", "preferred_sizes") else values[1:]
    return ModelSpace(**{**space.__dict__, name: kept})


def estimate_minutes(space: ModelSpace) -> float:
    return space.combinations() * SWEEP_STEPS_ESTIMATE * SECONDS_PER_MEASUREMENT / 60.0


def fit_budget(space: ModelSpace, budget_minutes: float) -> tuple[ModelSpace, str | None]:
    """Brute mode only: trims the space until its estimated time fits the budget; says what it dropped."""
    before = space.combinations()
    while estimate_minutes(space) > budget_minutes and space.combinations() > 1:
        trimmed = _trim(space)
        if trimmed == space:
            break
        space = trimmed
    if space.combinations() == before:
        return space, None
    return space, (f"brute search of '{space.name}' trimmed from {before} to {space.combinations()} configurations "
                   f"to fit --budget-minutes {budget_minutes:g}")


def concurrency_range(spaces: list[ModelSpace]) -> tuple[int, int]:
    """1 up to twice the most requests the largest configuration can hold in flight (at most 64)."""
    top = max((max(s.instance_counts) * (max(s.max_batch_sizes) if s.batches else 1) for s in spaces), default=1)
    return 1, max(4, min(64, 2 * top))
