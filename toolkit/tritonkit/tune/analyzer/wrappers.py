"""Executables Model Analyzer launches: tritonserver and perf_analyzer with the embedded runtime's environment.

Model Analyzer runs `triton_server_path` and `perf_analyzer_path` as plain programs, but the binaries from
the nvidia-pytriton and tritonclient wheels only run with the library path, PATH and backend directory that
`tritonkit.serve.runtime` prepares. Each wrapper sets those, records its pid (so tritonkit can stop what
Model Analyzer leaves behind) and `exec`s the real binary, so signals reach it directly.
"""
import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from tritonkit.serve.runtime import Runtime, perf_analyzer_path
from tritonkit.triton.server_args import MODEL_ANALYZER, Launch, tritonserver_args

#: The runtime environment variables the binaries need; everything else is inherited from Model Analyzer.
ENV_KEYS = ("LD_LIBRARY_PATH", "PATH", "PYTHONDONTWRITEBYTECODE")


@dataclass(frozen=True)
class Wrappers:
    tritonserver: Path
    perf_analyzer: Path


def _script(env: dict[str, str], pid_dir: Path, kind: str, command: list[str]) -> str:
    exports = "\n".join(f"export {key}={shlex.quote(env[key])}" for key in ENV_KEYS if key in env)
    return (
        "#!/bin/sh\n"
        f"# Written by tritonkit tune: runs {kind} with the embedded Triton runtime's environment.\n"
        f"{exports}\n"
        f"echo $$ > {shlex.quote(str(pid_dir))}/{kind}-$$.pid\n"
        f"exec {' '.join(shlex.quote(c) for c in command)} \"$@\"\n"
    )


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.chmod(path, 0o755)


def write_wrappers(runtime: Runtime, bin_dir: Path, pid_dir: Path) -> Wrappers:
    """Writes `bin/tritonserver` and `bin/perf_analyzer`; the server wrapper adds the backend and cache folders."""
    server = bin_dir / "tritonserver"
    perf = bin_dir / "perf_analyzer"
    _write(server, _script(runtime.env, pid_dir, "tritonserver", tritonserver_args(MODEL_ANALYZER, Launch(
        "", {}, program=str(runtime.tritonserver), runtime=(str(runtime.backends), str(runtime.caches))))))
    _write(perf, _script(runtime.env, pid_dir, "perf_analyzer", [str(perf_analyzer_path())]))
    return Wrappers(server, perf)
