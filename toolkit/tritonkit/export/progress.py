"""Progress lines on stderr: which model, which stage, seconds since its export started."""
import sys
from typing import Protocol, TextIO


class Progress(Protocol):
    """Receives one call per stage (load source, export (dynamo), verify 2/5, ...)."""

    def __call__(self, model: str, stage: str, elapsed_s: float) -> None: ...


class StderrProgress:
    """Prints `[export mlp   3.2s] verify 2/5 (random batch=8)` lines (stderr keeps stdout clean for data)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream

    def __call__(self, model: str, stage: str, elapsed_s: float) -> None:
        stream = self.stream or sys.stderr
        stream.write(f"[export {model} {elapsed_s:6.1f}s] {stage}\n")
        stream.flush()


class SilentProgress:
    """Discards progress (tests, benchmarks that print their own table)."""

    def __call__(self, model: str, stage: str, elapsed_s: float) -> None:
        return None
