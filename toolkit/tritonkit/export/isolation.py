"""Runs an export job in a child process with a timeout, so a crashing exporter cannot take the CLI down.

The child (`python -m tritonkit.export.child <cache slot>/job.json`) writes its whole output to export.log; a
reproduce.sh next to it replays the same job by hand. Stages the child reports are relayed as they come.
"""
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import tritonkit
from tritonkit.export.cache import Entry
from tritonkit.export.errors import BY_NAME, ExportCrashed, ExportError
from tritonkit.export.job import ExportJob, write
from tritonkit.extras import install_command, missing_module
from tritonkit.plugin import host

POLL_S = 0.1


def child_env(extra_paths: list[str]) -> dict[str, str]:
    """The parent's environment, with tritonkit's own import root and `extra_paths` on PYTHONPATH."""
    paths = list(extra_paths)
    package_dir = Path(tritonkit.__file__).parent
    if package_dir.name == "tritonkit":
        paths.append(str(package_dir.parent))
    if os.environ.get("PYTHONPATH"):
        paths.append(os.environ["PYTHONPATH"])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p for p in paths if p))
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def command(job_path: Path) -> list[str]:
    """The child's command line (the same interpreter as the parent)."""
    return [sys.executable, "-m", "tritonkit.export.child", str(job_path)]


def write_reproduce(work_dir: Path, job_path: Path, cwd: Path, env: dict[str, str]) -> Path:
    """reproduce.sh: replays the job in the foreground with the same interpreter, folder, PYTHONPATH and
    pipelines."""
    path = work_dir / "reproduce.sh"
    lines = [
        "#!/usr/bin/env bash",
        "# Replays this export outside tritonkit's CLI (output to the terminal). Written by tritonkit.",
        "set -euo pipefail",
        f"cd {shlex.quote(str(cwd))}",
        f"export PYTHONPATH={shlex.quote(env.get('PYTHONPATH', ''))}",
        f"export {host.SOURCE_ENV}={shlex.quote(env.get(host.SOURCE_ENV, ''))}",
        "exec " + " ".join(shlex.quote(part) for part in command(job_path)),
    ]
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o755)
    return path


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the child's process group, SIGKILL after 3 s."""
    for sig, wait in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _last_line(path: Path) -> str:
    try:
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


def run_child(job: ExportJob, entry: Entry, progress: Callable[[str], None]) -> None:
    """Runs the job in its cache slot; returns once result.json exists, else raises the child's error or
    ExportCrashed."""
    entry.dir.mkdir(parents=True, exist_ok=True)
    job_path, log_path = entry.file("job.json"), entry.file("export.log")
    progress_path, error_path, timeout_s = entry.file("progress.jsonl"), entry.file("error.json"), job.export.timeout_s
    write(job, job_path)
    env = child_env([str((job.project_dir / p).resolve()) for p in job.source.python_path])
    reproduce = write_reproduce(entry.dir, job_path, job.project_dir, env)
    stage, seen = "start", 0
    started = time.monotonic()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(command(job_path), cwd=job.project_dir, env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        timed_out = False
        while proc.poll() is None:
            if time.monotonic() - started > timeout_s:
                timed_out = True
                _stop(proc)
                break
            time.sleep(POLL_S)
            stage, seen = _relay(progress_path, seen, stage, progress)
        stage, seen = _relay(progress_path, seen, stage, progress)
    name, file, field = job.name, job.where.file, job.where.field
    where = f"see {log_path}; replay with: bash {reproduce}"
    if timed_out:
        raise ExportCrashed(file, f"{field}.export.timeout_s",
                            f"export of model '{name}' timed out after {timeout_s:g} s in stage '{stage}'",
                            f"raise export.timeout_s or {where}", str(log_path), str(reproduce))
    if proc.returncode == 0 and entry.file("result.json").is_file():
        return
    if error_path.is_file():
        data = json.loads(error_path.read_text())
        error = BY_NAME.get(data["kind"], BY_NAME["ExportError"])
        raise error(data["file"], data["field"], data["problem"], data["fix"])
    code = proc.returncode
    how = f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}"
    detail = _last_line(log_path)
    module = missing_module(detail) if code > 0 else None
    if module is not None and (install := install_command(module, prefer="export")) is not None:
        raise ExportError.at(job.where.at("export"), f"exporting model '{name}' needs the Python module '{module}', "
                             "which is not installed", install)
    raise ExportCrashed(file, f"{field}.export", f"export process of model '{name}' {how} in stage '{stage}'"
                        + (f" ({detail})" if detail and code > 0 else ""), where, str(log_path), str(reproduce))


def _relay(path: Path, seen: int, stage: str, progress: Callable[[str], None]) -> tuple[str, int]:
    """Forwards progress lines written since the last call; returns (latest stage, lines seen)."""
    try:
        lines = path.read_text().split("\n")[:-1]  # only complete lines: the child may be mid-write
    except OSError:
        return stage, seen
    for line in lines[seen:]:
        try:
            stage = json.loads(line)["stage"]
        except (ValueError, KeyError):
            continue
        progress(stage)
    return stage, len(lines)
