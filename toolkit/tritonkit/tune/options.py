"""What the user asked `tritonkit tune` for: target, objective, constraints, search, budget and measurement window.

One options type for every strategy (`strategies/`): each reads the fields of its own search and leaves the rest.
"""
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

Objective = Literal["throughput", "latency"]
Mode = Literal["quick", "brute"]
Launch = Literal["local", "remote", "docker"]
#: Queue delays a knob search tries for a step that batches (microseconds); the spec's own value is always among them.
DELAYS_US = (0, 1000, 5000)


@dataclass(frozen=True)
class Constraints:
    """Limits a configuration must meet to win; None means no limit."""

    max_p99_ms: float | None = None
    min_throughput: float | None = None
    #: A streaming engine's bounds (tune --joint): p99 over the requests' time to first token, p99 over every gap
    #: between two tokens of a stream.
    max_ttft_ms: float | None = None
    max_itl_ms: float | None = None

    def as_dict(self) -> dict[str, float]:
        """The provenance form: only the limits that were set."""
        return {name: float(value) for name, value in asdict(self).items() if value is not None}


@dataclass(frozen=True)
class TuneOptions:
    """One `tritonkit tune` invocation; defaults suit a small CPU host (noisy, 2 cores)."""

    target: str
    spec_path: Path
    objective: Objective = "throughput"
    constraints: Constraints = field(default_factory=Constraints)
    #: quick or brute: Model Analyzer's modes, or with `joint` coordinate descent or the grid.
    mode: Mode = "quick"
    #: tritonkit's own search over every step of a pipeline, measured end to end, instead of Model Analyzer.
    joint: bool = False
    budget_minutes: float = 30.0
    launch: Launch = "local"
    #: perf_analyzer count window (requests per measurement window) and allowed spread between windows.
    measurement_requests: int = 100
    stability_percentage: float = 25.0
    #: Upper bounds of the search; None derives them from the spec and the host.
    max_instances: int | None = None
    max_batch_size: int | None = None
    #: Measure the best configurations over a range of concurrencies after the search (quick mode).
    concurrency_sweep: bool = True
    dry_run: bool = False
    #: A joint search: at most `budget` configurations, each the median of `repeats` runs at `concurrency`.
    budget: int = 20
    repeats: int = 1
    concurrency: int = 4
    #: The knobs a joint search may move (None: every one), and the queue delays it tries.
    knobs: tuple[str, ...] | None = None
    delays_us: tuple[int, ...] = DELAYS_US
    #: Tokens each measuring stream generates when the pipeline runs an engine.
    max_tokens: int = 32
    #: False: measure and report only, the spec untouched (the benchmark's grid).
    write: bool = True
    #: Alternating rounds in which a winner other than the spec's own configuration is measured again against it
    #: before it is written (strategies/confirm.py); 0: the search's measurements decide alone.
    confirm_rounds: int = 2

    @property
    def search(self) -> str:
        """The walk a joint search takes: `descent` (quick) or `grid` (brute)."""
        return "grid" if self.mode == "brute" else "descent"
