"""Failures explained in one line with a fix: recorded logs of real failed runs, and a server that does not start."""
from __future__ import annotations

import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import require
from tritonkit.errors import TritonkitError
from tritonkit.tune.analyzer.failures import explain
from tritonkit.tune.analyzer.progress import ProgressTracker
from tritonkit.tune.analyzer.runner import RunOutcome
from tritonkit.tune.layout import TuneDir


def recorded_tune_dir(recorded: Path, tmp_path: Path, case: str) -> TuneDir:
    tune_dir = TuneDir(tmp_path / "tune")
    tune_dir.make()
    shutil.copy(recorded / case / "model-analyzer.log", tune_dir.analyzer_log)
    if (recorded / case / "perf_analyzer_error.log").is_file():
        shutil.copy(recorded / case / "perf_analyzer_error.log", tune_dir.perf_errors)
    return tune_dir


def test_unstable_measurement_suggests_a_longer_window(recorded: Path, tmp_path: Path) -> None:
    tune_dir = recorded_tune_dir(recorded, tmp_path, "unstable")
    error = explain(RunOutcome(0, 150.0), tune_dir, requests=10, stability=0.01)
    line = error.line()
    assert "failed to obtain a stable measurement" in line
    assert "--measurement-requests 30" in line and "\n" not in line and line.count("; ") == 1


def test_unstable_points_become_notes_while_running(recorded: Path) -> None:
    tracker = ProgressTracker()
    for line in (recorded / "unstable" / "model-analyzer.log").read_text().splitlines():
        tracker.feed(line)
    assert tracker.state.failed == 2 and tracker.state.measured == 0
    assert len(tracker.notes) == 2 and all("no stable measurement" in n for n in tracker.notes)


def test_server_that_died_names_its_last_log_line(tmp_path: Path) -> None:
    tune_dir = TuneDir(tmp_path / "tune")
    tune_dir.make()
    tune_dir.server_log.write_text("I1129 starting\nerror while loading shared libraries: libtritonserver.so\n")
    tune_dir.analyzer_log.write_text("[Model Analyzer] Starting a local Triton Server\n")
    outcome = RunOutcome(-15, 8.0, server_died=True)
    line = explain(outcome, tune_dir, 100, 25).line()
    assert "Triton did not start under Model Analyzer" in line
    assert "error while loading shared libraries: libtritonserver.so" in line and line.count("; ") == 1


def test_unknown_failure_still_says_something(tmp_path: Path) -> None:
    tune_dir = TuneDir(tmp_path / "tune")
    tune_dir.make()
    tune_dir.analyzer_log.write_text("[Model Analyzer] Starting a local Triton Server\n"
                                     "model_analyzer.model_analyzer_exceptions.TritonModelAnalyzerException: "
                                     "Config for model_repository is not specified.\n")
    tune_dir.server_log.write_text("started\n")
    line = explain(RunOutcome(1, 3.0), tune_dir, 100, 25).line()
    assert "Config for model_repository is not specified." in line and line.count("; ") == 1


@pytest.mark.server
def test_server_that_does_not_start_is_one_line_within_seconds(batchy_project: Path) -> None:
    require("model_analyzer", "pip install 'tritonkit[tune]'")
    require("pytriton", "pip install 'tritonkit[serve]'")
    from tritonkit.tune.analyzer.prepare import prepare
    from tritonkit.tune.options import TuneOptions
    from tritonkit.tune.strategies.model_analyzer import run_plan

    plan = prepare(TuneOptions("batchy", batchy_project, measurement_requests=20, max_instances=1, max_batch_size=2,
                               concurrency_sweep=False))
    wrapper = Path(plan.config["triton_server_path"])  # a broken runtime: the server cannot load its libraries
    wrapper.write_text(re.sub(r"export LD_LIBRARY_PATH=.*", "export LD_LIBRARY_PATH=/nonexistent", wrapper.read_text()))
    started = time.monotonic()
    with pytest.raises(TritonkitError) as err:
        run_plan(plan, lambda message: print(message, file=sys.stderr))
    assert time.monotonic() - started < 45  # Model Analyzer alone would retry for about a minute
    line = err.value.line()
    assert "Triton did not start under Model Analyzer" in line and "error while loading shared libraries" in line
    assert line.count("; ") == 1
    assert "tuned" not in batchy_project.read_text()
    for pid_file in plan.tune_dir.pids.glob("*.pid"):
        raise AssertionError(f"left behind: {pid_file}")
