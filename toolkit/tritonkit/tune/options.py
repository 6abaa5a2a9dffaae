"""What the user asked `tritonkit tune` for: objective, constraints, search mode, budget and measurement window."""
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

Objective = Literal["throughput", "latency"]
Mode = Literal["quick", "brute"]
Launch = Literal["local", "remote", "docker"]


@dataclass(frozen=True)
class Constraints:
    """Limits a configuration must meet to win; None means no limit."""

    max_p99_ms: float | None = None
    min_throughput: float | None = None
    #: An LLM pipeline's bounds (tune --joint): p99 over the requests' time to first token, p99 over every gap
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
    mode: Mode = "quick"
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
