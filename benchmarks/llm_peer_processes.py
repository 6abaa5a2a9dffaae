"""The peers' processes for benchmarks/llm_peers.py: llama.cpp's server and the onnxruntime-genai worker, each a
context manager that starts it (with the peers' python), a client for it, and memory of a process tree."""
from __future__ import annotations

import json
import subprocess
import threading
import time
import urllib.request
from pathlib import Path
from typing import IO, Any

import psutil
from gateway import _sse
from llm import Run, clients_run
from llm_peers_setup import PEERS, PYTHON, log

from tests.ports import quiet_ports

WORKER = Path(__file__).resolve().parent / "ort_genai_worker.py"


def peak_rss_mb(pid: int) -> float:
    """Sum of each process's peak resident set (VmHWM) over `pid` and every process under it, MB."""
    root = psutil.Process(pid)
    total_kb = 0
    for process in [root, *root.children(recursive=True)]:
        status = Path(f"/proc/{process.pid}/status").read_text()
        total_kb += int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))
    return total_kb * 1024 / 1e6


class LlamaCppServer:
    """`python -m llama_cpp.server` on the GGUF file, `threads` threads, on a free loopback port."""

    def __init__(self, model: Path, threads: int) -> None:
        [self.port] = quiet_ports(1)
        self.command = [str(PYTHON), "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
                        "--port", str(self.port), "--n_threads", str(threads), "--n_threads_batch", str(threads),
                        "--interrupt_requests", "False"]
        self.proc: subprocess.Popen | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def __enter__(self) -> LlamaCppServer:
        log_path = PEERS / "llamacpp-server.log"
        log(f"starting llama.cpp's server on port {self.port} (log: {log_path})")
        with log_path.open("w") as out:
            self.proc = subprocess.Popen(self.command, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama.cpp's server exited with {self.proc.returncode}; see {log_path}")
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/v1/models", timeout=5).close()
                return self
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"llama.cpp's server did not answer within 300 s; see {log_path}")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(30)

    def stream(self, prompt: str, max_tokens: int, arrivals: list[float], ready: threading.Barrier) -> float:
        """One streamed /v1/completions request (greedy, EOS held off until max_tokens); returns when it was sent."""
        body = {"prompt": prompt, "max_tokens": max_tokens, "min_tokens": max_tokens, "temperature": 0,
                "stream": True}
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/v1/completions", json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
        ready.wait()
        sent = time.perf_counter()
        events = _sse(request)
        arrivals += [at for at, event in events if event["choices"][0]["finish_reason"] is None]  # one per token
        return sent

    def run(self, prompts: list[str], max_tokens: int) -> Run:
        return clients_run(lambda p, arrivals, ready: self.stream(p, max_tokens, arrivals, ready), prompts)


class OrtGenaiWorker:
    """benchmarks/ort_genai_worker.py in the peers' python: the model loaded once, one generation at a time."""

    def __init__(self, model: Path) -> None:
        self.model = model
        self.proc: subprocess.Popen | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def _pipes(self) -> tuple[IO[str], IO[str]]:
        assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
        return self.proc.stdin, self.proc.stdout

    def __enter__(self) -> OrtGenaiWorker:
        log(f"loading onnxruntime-genai's model {self.model}")
        self.proc = subprocess.Popen([str(PYTHON), str(WORKER), str(self.model)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        if json.loads(self._pipes()[1].readline() or "{}").get("ready") is not True:
            raise RuntimeError(f"onnxruntime-genai's worker did not load {self.model} (its error is above)")
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.proc is not None:
            self._pipes()[0].close()
            self.proc.wait(30)

    def run(self, prompts: list[list[int]], max_tokens: int) -> Run:
        """Each prompt's generation in turn (c=1): a Run per call, its times from the request's start."""
        run = Run()
        stdin, stdout = self._pipes()
        for ids in prompts:
            started = time.perf_counter()
            stdin.write(json.dumps({"ids": ids, "max_tokens": max_tokens}) + "\n")
            stdin.flush()
            times = json.loads(stdout.readline())["tokens"]
            run.starts.append(started)
            run.tokens.append([started + t for t in times])
        return run
