"""Runs `model-analyzer profile` as a child process: streams its log into progress messages, stops it when
the budget is spent (SIGINT: Model Analyzer saves its checkpoint, so the next run resumes), and stops any
tritonserver or perf_analyzer it leaves behind.
"""
import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tritonkit.serve import process
from tritonkit.tune.analyzer.progress import ProgressTracker
from tritonkit.tune.layout import TuneDir

#: How long Model Analyzer may take to finish its current measurement and save after SIGINT.
INTERRUPT_GRACE_S = 120.0
#: A progress line at least this often while nothing new happens, so a long measurement does not look hung.
HEARTBEAT_S = 20.0

Report = Callable[[str], None]


@dataclass
class RunOutcome:
    """How the Model Analyzer run ended."""

    returncode: int | None
    elapsed_s: float
    budget_hit: bool = False
    interrupted: bool = False
    server_died: bool = False
    tracker: ProgressTracker = field(default_factory=ProgressTracker)
    log: Path | None = None

    @property
    def complete(self) -> bool:
        return self.returncode == 0 and not self.budget_hit and not self.interrupted


def analyzer_command(config_path: Path) -> list[str]:
    """`model-analyzer profile -f CONFIG`, with the interpreter running tritonkit (same virtualenv)."""
    return [sys.executable, "-m", "model_analyzer.entrypoint", "profile", "-f", str(config_path)]


def format_elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"


def _pid_in(pid_file: Path) -> int:
    """The pid a wrapper recorded in `pid_file`; 0 when it cannot be read."""
    try:
        return int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return 0


def stop_leftovers(tune_dir: TuneDir) -> list[int]:
    """Stops every tritonserver/perf_analyzer a wrapper recorded that still runs (with its process group)."""
    stopped: list[int] = []
    for pid_file in sorted(tune_dir.pids.glob("*.pid")):  # none when the folder is missing
        pid = _pid_in(pid_file)
        if pid > 1 and process.is_alive(pid) and process.program(pid).endswith((b"tritonserver", b"perf_analyzer")):
            try:
                pgid = os.getpgid(pid)
            except ProcessLookupError:
                pgid = None
            process.terminate(pid, pgid=pgid if pgid == pid else None, timeout=15.0)
            stopped.append(pid)
        pid_file.unlink(missing_ok=True)
    return stopped


#: Stages in which Model Analyzer waits for the one server it started (it retries for a minute before failing).
_STARTUP_STAGES = ("starting Triton", "measuring the idle server")
#: Seconds without a live tritonserver, during startup, before the run is stopped as "server did not start".
SERVER_GONE_S = 5.0


def server_gone(tune_dir: TuneDir) -> bool:
    """A tritonserver was started (its wrapper wrote a pid) and none of them runs any more."""
    pids = [pid for pid_file in tune_dir.pids.glob("tritonserver-*.pid") if (pid := _pid_in(pid_file))]
    return bool(pids) and not any(process.is_alive(pid) for pid in pids)


def _reader(stream, lines: queue.Queue[str | None]) -> None:
    for line in iter(stream.readline, ""):
        lines.put(line)
    lines.put(None)


def run_analyzer(config_path: Path, tune_dir: TuneDir, budget_s: float, report: Report) -> RunOutcome:
    """Runs Model Analyzer to completion, to the budget, or to Ctrl-C; always stops what it started."""
    stop_leftovers(tune_dir)
    for stale in (tune_dir.perf_log, tune_dir.perf_errors):  # so failures are explained from this run's logs only
        stale.unlink(missing_ok=True)
    tracker = ProgressTracker()
    started = time.monotonic()
    tune_dir.logs.mkdir(parents=True, exist_ok=True)
    outcome = RunOutcome(None, 0.0, tracker=tracker, log=tune_dir.analyzer_log)
    with open(tune_dir.analyzer_log, "w", encoding="utf-8") as log:
        proc = subprocess.Popen(analyzer_command(config_path), cwd=tune_dir.root, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
                                start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
        last_report, signalled_at, gone_since = time.monotonic(), None, None
        try:
            while True:
                try:
                    line = lines.get(timeout=1.0)
                except queue.Empty:
                    line = ""
                now = time.monotonic()
                if line is None:
                    break
                if line:
                    log.write(line)
                    log.flush()
                    message = tracker.feed(line)
                    if message:
                        report(f"[tune {format_elapsed(now - started)}] {message}")
                        last_report = now
                if now - last_report >= HEARTBEAT_S:
                    report(f"[tune {format_elapsed(now - started)}] {tracker.state.describe()} (still running)")
                    last_report = now
                if signalled_at is None and tracker.state.stage in _STARTUP_STAGES and server_gone(tune_dir):
                    gone_since = gone_since or now
                    if now - gone_since > SERVER_GONE_S:  # Model Analyzer would keep retrying for a minute
                        outcome.server_died = True
                        report(f"[tune {format_elapsed(now - started)}] tritonserver exited during startup; "
                               "stopping Model Analyzer")
                        process.terminate(proc.pid, pgid=proc.pid, proc=proc, timeout=10.0)
                        signalled_at = now
                else:
                    gone_since = None
                if signalled_at is None and now - started > budget_s:
                    outcome.budget_hit = True
                    report(f"[tune {format_elapsed(now - started)}] budget of {budget_s / 60:g} min spent: asking "
                           "Model Analyzer to save its checkpoint and stop")
                    proc.send_signal(signal.SIGINT)
                    signalled_at = now
                if signalled_at is not None and now - signalled_at > INTERRUPT_GRACE_S:
                    process.terminate(proc.pid, pgid=proc.pid, proc=proc, timeout=10.0)
        except KeyboardInterrupt:
            outcome.interrupted = True
            report("interrupted: Model Analyzer saves its checkpoint and stops (run the same command to resume)")
            with contextlib.suppress(subprocess.TimeoutExpired, KeyboardInterrupt):
                proc.send_signal(signal.SIGINT)
                proc.wait(timeout=INTERRUPT_GRACE_S)
        finally:
            if proc.poll() is None:
                process.terminate(proc.pid, pgid=proc.pid, proc=proc, timeout=10.0)
            proc.wait()
            stop_leftovers(tune_dir)
    outcome.returncode = proc.returncode
    outcome.elapsed_s = time.monotonic() - started
    return outcome
