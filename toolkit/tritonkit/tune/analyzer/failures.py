"""Explains a Model Analyzer run that produced nothing usable: one located line and a fix, never an empty table.

Model Analyzer reports problems as INFO lines deep in a long log, and perf_analyzer's own message is only in
its output file; these functions read both and name the likeliest cause first.
"""
import re

from tritonkit.errors import TritonkitError
from tritonkit.serve import serverlog
from tritonkit.tune.analyzer.runner import RunOutcome
from tritonkit.tune.layout import TuneDir

_MA_ERROR = re.compile(r"(?:Model Analyzer encountered an error|TritonModelAnalyzerException): (.*)")
_LOAD_FAILED = re.compile(r"Model (\S+) load failed: (.*)")
_PA_FAILED = re.compile(r"Running perf_analyzer failed with exit status (\d+)")


def _clean(text: str) -> str:
    """Embedded log text without ';' (the one-line form keeps exactly one '; ' between problem and fix)."""
    return text.replace(";", ",")


def _following(text: str, pattern: re.Pattern[str]) -> str | None:
    """The matched line's message, joined with its continuation lines (Model Analyzer wraps errors)."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if m := pattern.search(line):
            rest = [m.group(1).strip()] + [ln.strip() for ln in lines[index + 1:index + 4]
                                            if ln.strip() and not ln.startswith(("[Model Analyzer]", "Traceback"))]
            return " ".join(r for r in rest if r)
    return None


def _last_error(text: str) -> str | None:
    """The last error Model Analyzer raised (its traceback's final line, or its own error message)."""
    found = None
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if _MA_ERROR.search(line):
            found = _following("\n".join(lines[index:]), _MA_ERROR)
    return found


def unstable(tune_dir: TuneDir, options_requests: int, options_stability: float) -> TritonkitError:
    return TritonkitError(
        str(tune_dir.perf_log), "perf_analyzer",
        "perf_analyzer failed to obtain a stable measurement (throughput varied more than "
        f"{options_stability:g}% between windows of {options_requests} requests)",
        f"measure with a longer window: --measurement-requests {options_requests * 3} "
        f"(or allow more spread: --stability-percentage {min(options_stability * 2, 100):g})")


def server_did_not_start(tune_dir: TuneDir, detail: str) -> TritonkitError:
    tail = serverlog.tail(tune_dir.server_log, 3)
    last = tail[-1] if tail else "(the server log is empty)"
    return TritonkitError(
        str(tune_dir.server_log), "tritonserver",
        _clean(f"Triton did not start under Model Analyzer ({detail}), its log ends with: {last}"),
        "check that `tritonkit serve` runs this repository, then tune again")


def explain(outcome: RunOutcome, tune_dir: TuneDir, requests: int, stability: float) -> TritonkitError:
    """The one-line reason a run yielded no measurement, with the fix to try."""
    ma_log = serverlog.read_text(tune_dir.analyzer_log)
    perf_log = serverlog.read_text(tune_dir.perf_log) + serverlog.read_text(tune_dir.perf_errors)
    if "Failed to obtain stable measurement" in perf_log or "Failed to obtain stable measurement" in ma_log \
            or "Please use a larger time window" in perf_log:
        return unstable(tune_dir, requests, stability)
    error = _last_error(ma_log)
    if outcome.server_died:
        return server_did_not_start(tune_dir, "the tritonserver process exited")
    if error and ("server readiness" in error or "did not launch" in error or "StatusCode.UNAVAILABLE" in error
                  or "Failed to establish a new connection" in error or "Connection refused" in error):
        return server_did_not_start(tune_dir, serverlog.one_line(error)[:200])
    if "Starting a local Triton Server" in ma_log and not tune_dir.server_log.is_file():
        return server_did_not_start(tune_dir, "no server log was written")
    loads = _LOAD_FAILED.findall(ma_log)
    if loads:
        variant, reason = loads[0]
        return TritonkitError(
            str(tune_dir.server_log), f"model {variant}",
            _clean("Triton could not load the configuration Model Analyzer generated: "
                   f"{serverlog.one_line(reason)[:300]}"),
            "make sure `tritonkit serve` loads the model, or narrow the search (--max-batch-size, --max-instances)")
    if error:
        return TritonkitError(str(tune_dir.analyzer_log), "model-analyzer", _clean(serverlog.one_line(error)[:400]),
                              f"fix the cause, or inspect the generated config {tune_dir.config}")
    if m := _PA_FAILED.search(ma_log):
        first = next((ln.strip() for ln in perf_log.splitlines() if ln.strip().lower().startswith(("error", "failed"))),
                     f"exit status {m.group(1)}")
        return TritonkitError(str(tune_dir.perf_log), "perf_analyzer", _clean(f"perf_analyzer failed: {first}"),
                              "check the model's inputs (add a smoke case so tune sends real data)")
    if outcome.budget_hit:
        return TritonkitError(str(tune_dir.analyzer_log), "--budget-minutes",
                              "the budget ran out before Model Analyzer finished a single measurement",
                              "raise --budget-minutes (the checkpoint keeps what was measured)")
    if outcome.interrupted:
        return TritonkitError(str(tune_dir.analyzer_log), "", "interrupted before any measurement finished",
                              "run the same command again")
    tail = [ln for ln in ma_log.splitlines() if ln.strip() and "WARNING" not in ln][-1:] or ["(empty log)"]
    return TritonkitError(str(tune_dir.analyzer_log), "model-analyzer",
                          _clean(f"Model Analyzer exited with status {outcome.returncode} without measurements (last "
                                 f"line: {tail[0].removeprefix('[Model Analyzer] ')[:300]})"),
                          "read the log for the cause, then run tune again (finished measurements are kept)")
