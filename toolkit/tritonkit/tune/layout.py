"""Where one tuning run keeps its files: `.tritonkit/tune/<target>/`, stable across runs so they can resume."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tritonkit.serve.state import STATE_DIR


@dataclass(frozen=True)
class TuneDir:
    """Paths of a target's tuning directory; Model Analyzer's own output lands in `results/`, `reports/`, `plots/`."""

    root: Path

    @classmethod
    def for_target(cls, project_root: Path, target: str) -> TuneDir:
        return cls(project_root / STATE_DIR / "tune" / target)

    @property
    def config(self) -> Path:
        return self.root / "model-analyzer.yaml"

    @property
    def ports(self) -> Path:
        return self.root / "ports.json"

    @property
    def resume_key(self) -> Path:
        return self.root / "resume-key.txt"

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def built(self) -> Path:
        """The target's models built from the spec without its `tuned:` overlay (the baseline)."""
        return self.root / "repository"

    @property
    def checkpoints(self) -> Path:
        return self.root / "checkpoints"

    @property
    def variants(self) -> Path:
        """Model Analyzer's output model repository: one folder per configuration it tried."""
        return self.root / "variants"

    @property
    def results(self) -> Path:
        return self.root / "results"

    @property
    def reports(self) -> Path:
        return self.root / "reports"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def server_log(self) -> Path:
        return self.logs / "tritonserver.log"

    @property
    def perf_log(self) -> Path:
        return self.logs / "perf_analyzer.log"

    @property
    def perf_errors(self) -> Path:
        """Model Analyzer's own log of failed perf_analyzer runs (written into its export path)."""
        return self.root / "perf_analyzer_error.log"

    @property
    def analyzer_log(self) -> Path:
        return self.logs / "model-analyzer.log"

    @property
    def pids(self) -> Path:
        """The wrappers record the pid of every tritonserver/perf_analyzer they start here."""
        return self.root / "pids"

    @property
    def plot(self) -> Path:
        return self.reports / "tritonkit-throughput-vs-p99.png"

    @property
    def summary(self) -> Path:
        return self.root / "summary.json"

    def make(self) -> None:
        for path in (self.root, self.bin, self.logs, self.pids):
            path.mkdir(parents=True, exist_ok=True)
