"""`EmbeddedServer`: one tritonserver process on a model repository, from start to clean stop.

Start checks the ports, prepares the runtime and the serving directory, launches Triton with
`--exit-on-error=false` so that one broken model does not hide the others, waits with progress, and then
names every model that failed to load with Triton's own reason (from the repository index).
"""
from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tritonkit.errors import Problem, TritonkitError
from tritonkit.serve import health, process, serverlog
from tritonkit.serve.fallback import stand_in_backends
from tritonkit.serve.health import ModelStatus
from tritonkit.serve.ports import choose_ports, port_taken_error
from tritonkit.serve.runtime import prepare_runtime
from tritonkit.serve.serving import ServingRepository, build_serving_repository
from tritonkit.serve.state import STATE_DIR, ServerState
from tritonkit.serve.stubs import StubRestart, StubWatch, events_path
from tritonkit.triton.layout import model_dirs, read_configs
from tritonkit.triton.server_args import EMBEDDED, Launch, response_cache_bytes, tritonserver_args


@dataclass(frozen=True)
class Progress:
    """Startup progress handed to the `progress` callback about once a second."""

    elapsed_s: float
    loaded: int
    failed: int
    total: int

    def line(self) -> str:
        """`waiting for Triton: 12 s, 3/7 models loaded`: the text of the one progress line a terminal updates."""
        return (f"waiting for Triton: {self.elapsed_s:.0f} s, {self.loaded}/{self.total} models loaded"
                + (f", {self.failed} failed" if self.failed else ""))


class ServerExited(TritonkitError):
    """Triton exited on its own; carries the last lines of its log for the reader."""

    def __init__(self, pid: int, how: str, when: str, log: Path) -> None:
        self.log_tail = serverlog.tail(log)
        last = self.log_tail[-1] if self.log_tail else "(empty log)"
        super().__init__(str(log), "", f"Triton server (pid {pid}) exited {when} with {how}",
                         f"read the log; its last line: {last}")


def _not_ready(index: list[ModelStatus], folders: list[str]) -> list[ModelStatus]:
    """Versions Triton could not load, plus model folders it does not list at all (e.g. no version)."""
    failed = [m for m in index if not m.ready]
    known = {m.name for m in index if m.ready} | {m.name for m in failed}
    return failed + [ModelStatus(name, "", "UNAVAILABLE") for name in sorted(folders) if name not in known]


class EmbeddedServer:
    """Triton 2.51 from the nvidia-pytriton wheel, bound to `host` (127.0.0.1 unless told otherwise)."""

    def __init__(self, repository: str | Path, *, host: str = "127.0.0.1", http_port: int | None = None,
                 grpc_port: int | None = None, metrics_port: int | None = None,
                 work_dir: str | Path | None = None, log_path: str | Path | None = None,
                 startup_timeout: float = 180.0, exit_timeout: float = 15.0, onnx_threads: int | None = None,
                 extra_args: Sequence[str] = (), progress: Callable[[Progress], None] | None = None,
                 detach: bool = False, admin_key_env: str | None = None) -> None:
        """`detach=True` lets the server outlive this process (background mode); otherwise it gets SIGTERM
        when this process dies. Ports left as None are picked free; `work_dir` defaults to ./.tritonkit.
        `admin_key_env` restricts the model-repository API (load/unload/index) to requests carrying the key
        that environment variable holds, as a production deployment does; the server's own requests send it."""
        self.repository = Path(repository)
        # An object-store URL (s3://host:port/bucket/prefix) is handed to Triton as is: no serving folder, no fallbacks.
        self.remote = str(repository) if str(repository).startswith("s3://") else None
        self.host = host
        self.wanted_ports = {"http": http_port, "grpc": grpc_port, "metrics": metrics_port}
        self.work_dir = Path(work_dir) if work_dir else Path.cwd() / STATE_DIR
        self.log_path = Path(log_path) if log_path else None
        self.startup_timeout, self.exit_timeout = startup_timeout, exit_timeout
        self.onnx_threads, self.extra_args = onnx_threads, list(extra_args)
        self.progress, self.detach, self.admin_key_env = progress, detach, admin_key_env
        self.ports: dict[str, int] = {}
        self.serving: ServingRepository | None = None
        self.models: list[ModelStatus] = []
        self.proc: subprocess.Popen | None = None

    # -- addresses ---------------------------------------------------------------------------------
    @property
    def http_url(self) -> str:
        return f"{self.host}:{self.ports['http']}"

    @property
    def grpc_url(self) -> str:
        return f"{self.host}:{self.ports['grpc']}"

    @property
    def metrics_url(self) -> str:
        return f"{self.host}:{self.ports['metrics']}"

    @property
    def pid(self) -> int:
        assert self.proc is not None, "server not started"
        return self.proc.pid

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> EmbeddedServer:
        """Starts Triton and returns once every model is ready; raises (and stops it) otherwise."""
        self.ports = choose_ports(self.host, self.wanted_ports)
        if self.remote is None:
            self.serving = build_serving_repository(self.repository, self.work_dir, threads=self.onnx_threads)
            model_repository = str(self.serving.path.resolve())
        else:
            model_repository = self.remote
        runtime = prepare_runtime()
        if self.log_path is None:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            self.log_path = self.work_dir / "logs" / f"tritonserver-{stamp}-{self.ports['http']}.log"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        # a published repository's ONNX models cannot be rewritten: an onnxruntime backend runs them unchanged
        backends = runtime.backends if self.remote is None else stand_in_backends(runtime.backends, self.work_dir)
        key = None
        if self.admin_key_env:  # Triton takes the key only as a flag: it is in the process's arguments, not the log
            key = os.environ.get(self.admin_key_env)
            if not key:
                raise TritonkitError("", self.admin_key_env, "no admin key in the environment",
                                     f"set {self.admin_key_env} to the key model load/unload requests must send")
        # explicit control so a model whose stub died can be reloaded (serve/stubs.py); an s3:// repository's configs
        # are not read here: a cache for any model that enables it, as a deployment has
        cmd = tritonserver_args(EMBEDDED, Launch(
            model_repository, self.ports, host=self.host, program=str(runtime.tritonserver), admin_key=key,
            runtime=(str(backends), str(runtime.caches)), exit_timeout_s=max(1, int(self.exit_timeout // 3)),
            cache_bytes=response_cache_bytes(None if self.remote else read_configs(self.repository))))
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(cmd + self.extra_args, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, env=runtime.env, start_new_session=True,
                                         preexec_fn=None if self.detach else process.die_with_parent)
        try:
            self._wait_until_loaded()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_until_loaded(self) -> None:
        assert self.proc is not None and self.log_path is not None, "set by start()"
        models = [p.name for p in model_dirs(self.serving.path)] if self.serving else []
        started, next_report = time.monotonic(), 0.0
        while True:
            elapsed = time.monotonic() - started
            if self.proc.poll() is not None:
                self._raise_startup_exit()
            if health.is_live(self.http_url):
                index = health.repository_index(self.http_url, self.admin_key_env)
                if index is not None and not any(m.state == "LOADING" for m in index):
                    self.models = index
                    break
            if elapsed > self.startup_timeout:
                raise TritonkitError(str(self.log_path), "", f"Triton did not become ready within "
                                     f"{self.startup_timeout:.0f} s", "read the log, or raise the startup timeout")
            if elapsed >= next_report:  # about once a second, from the log
                self._raise_on_init_error()
                if self.progress:
                    scan = serverlog.scan(self.log_path)
                    self.progress(Progress(elapsed, len(scan.loaded), len(scan.failed), len(models)))
                next_report = elapsed + 1.0
            time.sleep(0.2)
        failed = _not_ready(self.models, models)
        if failed:
            raise TritonkitError.of([self._load_problem(m) for m in failed])

    def _raise_on_init_error(self) -> None:
        """Triton could not set up (an s3:// repository it cannot read): it runs on with no model, so say so at once."""
        assert self.log_path is not None, "set by start()"
        reason = serverlog.init_error(self.log_path)
        if reason is None:
            return
        fix = ("check that the bucket and prefix exist (tritonkit publish writes them), the endpoint "
               "(s3://HOST:PORT/... or --endpoint-url) and the AWS_* credentials in the environment "
               f"(server log: {self.log_path})" if self.remote else f"read the server log: {self.log_path}")
        raise TritonkitError(self.remote or str(self.repository), "",
                             f"Triton cannot use the model repository: {reason}", fix)

    def _load_problem(self, model: ModelStatus) -> Problem:
        assert self.log_path is not None, "set by start()"
        reason = serverlog.one_line(model.reason or serverlog.reason_for(self.log_path, model.name)
                                    or "Triton gives no reason; see the server log")
        if self.serving:  # show the user's paths, not the serving directory's
            reason = reason.replace(str(self.serving.path.resolve()), str(self.serving.source))
        version = f" version {model.version}" if model.version else ""
        fix = f"fix the model and serve again (full server log: {self.log_path})"
        if "failed to read text proto" in reason:
            fix = (f"`tritonkit validate {self.repository}`" if self.remote is None else "`tritonkit validate` on the "
                   "built folder it was published from") + " shows the line and field at fault"
        elif "unable to find backend library" in reason:
            fix = ("a published repository runs as published, and here only Python and ONNX Runtime models run: "
                   "serve the built folder it was published from (`tritonkit serve` runs its model.onnx instead), "
                   "or check it in the Triton container" if self.remote else
                   "the embedded server has the Python backend only; name the platform in config.pbtxt "
                   "(onnxruntime_onnx, tensorrt_plan, pytorch_libtorch) so tritonkit runs its model.onnx instead")
        elif "no GPUs are available" in reason:
            fix = ("this machine has no GPU: serve it here with instance_group kind KIND_CPU (or KIND_AUTO, which "
                   "takes a GPU where there is one)")
        elif dependency := re.search(r"depends on '([^']+)'", reason):
            fix = f"fix model '{dependency.group(1)}' (its own line says why it failed) and serve again"
        where = f"{self.remote}/{model.name}" if self.remote else str(self.repository / model.name)
        return Problem(where, "", f"model '{model.name}'{version} failed to load: {reason}", fix)

    def _raise_startup_exit(self) -> None:
        assert self.proc is not None and self.log_path is not None, "set by start()"
        taken = serverlog.port_in_use(self.log_path)
        if taken:
            raise port_taken_error(*taken)
        raise ServerExited(self.proc.pid, process.describe_exit(self.proc.returncode), "during startup", self.log_path)

    def check(self) -> None:
        """Raises `ServerExited` (with the log's tail) if Triton has died since it started."""
        if self.proc is not None and self.log_path is not None and self.proc.poll() is not None:
            raise ServerExited(self.proc.pid, process.describe_exit(self.proc.returncode), "while serving",
                               self.log_path)

    @property
    def events_path(self) -> Path:
        """Where stub restarts of this server are recorded."""
        assert self.log_path is not None, "set by start()"
        return events_path(self.log_path)

    def wait(self, poll_s: float = 0.5, on_restart: Callable[[StubRestart], None] | None = None) -> None:
        """Blocks while the server runs (foreground mode), reloading models whose stub died;
        raises `ServerExited` when the server dies."""
        watch = StubWatch(self.pid, self.http_url, self.events_path, self.admin_key_env)
        while True:
            self.check()
            for event in watch.heal():
                if on_restart:
                    on_restart(event)
            time.sleep(poll_s)

    def stop(self) -> str:
        """SIGTERM, then SIGKILL after `exit_timeout`; returns how it ended ("sigterm", "sigkill", "exited")."""
        if self.proc is None:
            return "exited"
        return process.terminate(self.proc.pid, pgid=self.proc.pid, proc=self.proc, timeout=self.exit_timeout)

    def state(self) -> ServerState:
        """What `tritonkit stop` needs to find this server later."""
        return ServerState(pid=self.pid, pgid=self.pid, host=self.host, http_port=self.ports["http"],
                           grpc_port=self.ports["grpc"], metrics_port=self.ports["metrics"], log=str(self.log_path),
                           repository=self.remote or str(self.repository.resolve()),
                           serving_repository=str(self.serving.path.resolve()) if self.serving else "")

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
