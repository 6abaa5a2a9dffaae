"""The peers' processes for benchmarks/llm_peers.py: llama-cpp-python's server, llama.cpp's llama-server and the
onnxruntime-genai worker, each a context manager that starts it, a client for it, and memory of a process tree."""
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


class HttpPeer:
    """A peer's HTTP server on a free loopback port: started with its log in .tritonkit/peers/<name>.log, ready when
    `ready_path` answers, its clients one streamed request each (`stream`)."""

    name = ""
    ready_path = ""

    def __init__(self) -> None:
        [self.port] = quiet_ports(1)
        self.proc: subprocess.Popen | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        raise NotImplementedError

    def stream(self, prompt: str, max_tokens: int, arrivals: list[float], ready: threading.Barrier) -> float:
        """One streamed greedy request of `max_tokens` tokens (EOS held off): appends each token's arrival time,
        returns when it was sent."""
        raise NotImplementedError

    def __enter__(self) -> HttpPeer:
        log_path = PEERS / f"{self.name}.log"
        log(f"starting {self.name} on port {self.port} (log: {log_path})")
        with log_path.open("w") as out:
            self.proc = subprocess.Popen(self.command(), stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}; see {log_path}")
            try:
                urllib.request.urlopen(self.url + self.ready_path, timeout=5).close()
                return self
            except OSError:  # not listening yet, or 503 while it loads the model
                time.sleep(0.5)
        raise RuntimeError(f"{self.name} did not answer within 300 s; see {log_path}")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(30)

    def post(self, path: str, body: dict[str, Any]) -> urllib.request.Request:
        return urllib.request.Request(self.url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})

    def run(self, prompts: list[str], max_tokens: int) -> Run:
        return clients_run(lambda p, arrivals, ready: self.stream(p, max_tokens, arrivals, ready), prompts)


class LlamaCppServer(HttpPeer):
    """`python -m llama_cpp.server` on the GGUF file, `threads` threads."""

    name = "llamacpp-server"
    ready_path = "/v1/models"

    def __init__(self, model: Path, threads: int) -> None:
        super().__init__()
        self.model, self.threads = model, threads

    def command(self) -> list[str]:
        return [str(PYTHON), "-m", "llama_cpp.server", "--model", str(self.model), "--host", "127.0.0.1",
                "--port", str(self.port), "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads),
                "--interrupt_requests", "False"]

    def stream(self, prompt: str, max_tokens: int, arrivals: list[float], ready: threading.Barrier) -> float:
        """One streamed /v1/completions request (temperature 0, min_tokens = max_tokens)."""
        request = self.post("/v1/completions", {"prompt": prompt, "max_tokens": max_tokens, "min_tokens": max_tokens,
                                                "temperature": 0, "stream": True})
        ready.wait()
        sent = time.perf_counter()
        events = _sse(request)
        arrivals += [at for at, event in events if event["choices"][0]["finish_reason"] is None]  # one per token
        return sent


class LlamaServer(HttpPeer):
    """llama.cpp's own `llama-server` on the GGUF file: `threads` threads, `slots` parallel slots decoded together
    (continuous batching), each slot `slot_tokens` of context."""

    name = "llama-server"
    ready_path = "/health"

    def __init__(self, binary: Path, model: Path, threads: int, slots: int, slot_tokens: int) -> None:
        super().__init__()
        self.binary, self.model, self.threads, self.slots, self.slot_tokens = binary, model, threads, slots, slot_tokens

    def command(self) -> list[str]:
        return [str(self.binary), "--model", str(self.model), "--host", "127.0.0.1", "--port", str(self.port),
                "--threads", str(self.threads), "--threads-batch", str(self.threads), "--parallel", str(self.slots),
                "--cont-batching", "--ctx-size", str(self.slots * self.slot_tokens)]

    def tokenize(self, prompt: str) -> list[int]:
        """The prompt's ids as /completion sees them (special tokens added as the GGUF file says)."""
        with urllib.request.urlopen(self.post("/tokenize", {"content": prompt, "add_special": True}), timeout=60) as r:
            return json.load(r)["tokens"]

    def stream(self, prompt: str, max_tokens: int, arrivals: list[float], ready: threading.Barrier) -> float:
        """One streamed /completion request (greedy: temperature 0, top_k 1; ignore_eos): one event a token, then
        a last one (`stop`) with the count the server decoded."""
        request = self.post("/completion", {"prompt": prompt, "n_predict": max_tokens, "temperature": 0, "top_k": 1,
                                            "ignore_eos": True, "stream": True})
        ready.wait()
        sent = time.perf_counter()
        *tokens, (_, last) = _sse(request)
        arrivals += [at for at, _ in tokens]
        if not last["stop"] or last["tokens_predicted"] != len(tokens):
            raise RuntimeError(f"llama-server decoded {last['tokens_predicted']} tokens and streamed {len(tokens)}")
        return sent


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
