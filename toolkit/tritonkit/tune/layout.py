"""Where one tuning run keeps its files: `.tritonkit/tune/<target>/`, stable across runs so they can resume."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tritonkit.files import Below
from tritonkit.serve.state import STATE_DIR


@dataclass(frozen=True)
class TuneDir:
    """Paths of a target's tuning directory; Model Analyzer's own output lands in `results/`, `reports/`, `plots/`."""

    root: Path

    @classmethod
    def for_target(cls, project_root: Path, target: str) -> TuneDir:
        return cls(project_root / STATE_DIR / "tune" / target)

    config = Below("model-analyzer.yaml")
    ports = Below("ports.json")
    resume_key = Below("resume-key.txt")
    bin = Below("bin")
    #: The target's models built from the spec without its `tuned:` overlay (the baseline).
    built = Below("repository")
    checkpoints = Below("checkpoints")
    #: Model Analyzer's output model repository: one folder per configuration it tried.
    variants = Below("variants")
    results = Below("results")
    reports = Below("reports")
    logs = Below("logs")
    server_log = Below("logs", "tritonserver.log")
    perf_log = Below("logs", "perf_analyzer.log")
    #: Model Analyzer's own log of failed perf_analyzer runs (written into its export path).
    perf_errors = Below("perf_analyzer_error.log")
    analyzer_log = Below("logs", "model-analyzer.log")
    #: The wrappers record the pid of every tritonserver/perf_analyzer they start here.
    pids = Below("pids")
    plot = Below("reports", "tritonkit-throughput-vs-p99.png")
    summary = Below("summary.json")

    def make(self) -> None:
        for path in (self.root, self.bin, self.logs, self.pids):
            path.mkdir(parents=True, exist_ok=True)
