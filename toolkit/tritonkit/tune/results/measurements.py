"""What a search measured: one `Measurement` per configuration and load, and each configuration's model config.

Model Analyzer's results are read into these (`analyzer/checkpoint.py`) and so are tritonkit's own searches', so
choosing, reporting and the write-back are one path.
"""
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Measurement:
    """One perf_analyzer measurement of one configuration (top-level variant) at one concurrency."""

    variant: str
    concurrency: int
    throughput: float
    p99_ms: float
    composing: tuple[str, ...] = ()
    satisfies: bool | None = None  # Model Analyzer's verdict, when read from its CSV
    #: An engine's p99 time to first token and p99 inter-token gap (throughput is then tokens/s).
    ttft_ms: float | None = None
    itl_ms: float | None = None


@dataclass
class TuneResults:
    """Measurements plus each variant's model config (Model Analyzer's JSON form of Triton's ModelConfig)."""

    model: str
    measurements: list[Measurement] = field(default_factory=list)
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    composing: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def by_variant(self) -> dict[str, list[Measurement]]:
        grouped: dict[str, list[Measurement]] = {}
        for m in self.measurements:
            grouped.setdefault(m.variant, []).append(m)
        return grouped
