"""The OpenAI gateway's cost: the same requests through `tritonkit gateway` and straight to Triton.

Usage: python benchmarks/gateway.py [--rounds 5] [--tokens 32]

LLM: SmolLM2-135M-Instruct (examples/llm/smollm2, built under .tritonkit/bench/gateway/) served on the embedded
Triton; the same raw prompts (greedy, so all ways generate the same tokens) streamed through the gateway's
/v1/completions (SSE, usage from stream_options), straight to Triton's HTTP /v2/models/llm/generate_stream (the `llm`
ensemble: text in, text out, what a client of Triton calls), as the gateway's own Triton request alone: the prompt's
ids (encoded before the clock starts) streamed to `generate` in one gRPC ModelStreamInfer call with the gateway's
inputs, requested outputs and flags, made with grpcio's asyncio stubs and nothing else (RawGrpc), on a stream an
earlier request left open, as the gateway sends them (ttft_floor_raw_grpc_kept_over_http_c1: the floor of gRPC to
Triton), and through the relay floor (benchmarks/gateway_floor.py's /floor/generate: the same ids posted to a second
process on the gateway's own stack, uvicorn, Starlette and its Triton client, which streams each response's text
back as SSE and does nothing else: floor_relay_ttft_over_direct_c1 and floor_relay_over_direct_tokens_s_c8 are the
least any gateway on this stack, a second Python process between client and Triton, could reach).
c=1 and c=8 requests at once, each way going first in turn round by round; the HTTP ways over kept-open connections
(KeptOpen: the `openai` client's pool keeps them, so no way's TTFT includes a TCP connect), the gRPC way on one
kept-open channel. Reported per way and concurrency:
medians over rounds of output tokens/s (all tokens of the round over its wall time) and mean time to first text (TTFT);
and the share of the machine's CPU the gateway process used in its c=8 rounds: with the model CPU-bound, 1 - that
share (tokens_s_c8_floor) is the c=8 ratio a gateway that cost nothing but its own CPU would reach.
ASR: the asr starter served likewise; audio transcribed through /v1/audio/transcriptions (multipart over a kept-open
HTTP connection, decoded by the gateway), straight to the `asr` ensemble over gRPC, and through the floor
(benchmarks/gateway_floor.py: the gateway's own server stack and request handling, multipart parsed and the file
decoded, answering a fixed transcript without Triton), the three sides taking turns going first; median latency. Two
kinds of audio: 8 held-out command clips (~1.4 s, ~8 ms to transcribe, so any HTTP hop is a large share of it) and
~10 s recordings (consecutive held-out clips joined with 0.25 s of silence, as benchmarks/asr.py's `joined` makes
them: the length of a spoken request). (floor + direct) / direct is the least ratio any gateway on this HTTP stack
could reach.
The last line is {"gateway_over_direct_tokens_s_c8", "gateway_ttft_over_direct_c1", "gateway_ttft_over_direct_grpc_c1",
"ttft_floor_raw_grpc_kept_over_http_c1", "floor_relay_ttft_over_direct_c1", "floor_relay_over_direct_tokens_s_c8",
"gateway_ttft_over_floor_relay_c1", "transcription_gateway_over_direct",
"transcription_floor_over_direct", "transcription_gateway_over_direct_short", "transcription_floor_over_direct_short",
"tokens_s_c8_floor"}: the unsuffixed transcription ratios are on the ~10 s recordings, the _short ones on the command
clips.
"""
from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import statistics
import struct
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tests.gateway.conftest import gateway  # noqa: E402  (runs `tritonkit gateway` as a user does)
from tests.ports import quiet_ports  # noqa: E402
from tritonkit.pipelines import registry  # noqa: E402

registry.install()

PROMPTS = ["The capital of France is", "Once upon a time", "Write a haiku about the sea:", "def fibonacci(n):",
           "The three primary colors are", "In 1969, the first person to walk on the Moon was",
           "A recipe for pancakes: first,", "Translate to French: good morning"]
FOLDER = REPO_ROOT / ".tritonkit" / "bench" / "gateway"
WAYS = {"gateway": "gateway /v1/completions", "direct": "Triton's HTTP generate_stream of the llm ensemble",
        "direct gRPC kept": "the gateway's request to generate on a kept gRPC stream, grpcio's stub alone",
        "floor relay": "the same ids relayed by the gateway's stack and Triton client, nothing else"}
JSON = {"Content-Type": "application/json"}


def _events(reply: Iterable[bytes]) -> list[tuple[float, dict]]:
    """(arrival time, event) of each data: line until [DONE] or the end."""
    events = []
    for line in reply:
        if line.startswith(b"data:"):
            data = line[5:].strip()
            if data == b"[DONE]":
                break
            events.append((time.perf_counter(), json.loads(data)))
    return events


def _sse(request: urllib.request.Request) -> list[tuple[float, dict]]:
    """The events of one request on a connection of its own (llm_peers' llama.cpp client)."""
    with urllib.request.urlopen(request, timeout=600) as reply:
        return _events(reply)


class KeptOpen:
    """HTTP connections kept open between requests, one per request in flight, as the `openai` client's pool (and a
    tritonclient or requests session) keeps them: TTFT is then the request's, not a TCP connect and accept. A
    connection idle longer than STALE_S (uvicorn closes idle ones after 5 s) is opened afresh before the clock
    starts."""

    STALE_S = 3.0

    def __init__(self) -> None:
        self.idle: dict[str, list[tuple[float, http.client.HTTPConnection]]] = {}
        self.lock = threading.Lock()

    def sse(self, url: str, body: dict) -> tuple[float, list[tuple[float, dict]]]:
        """(send time, [(arrival time, event) of each data: line until [DONE] or the end]) of one POST."""
        where = urllib.parse.urlsplit(url)
        with self.lock:
            idle = self.idle.setdefault(where.netloc, [])
            last_used, connection = idle.pop() if idle else (0.0, http.client.HTTPConnection(where.netloc, timeout=600))
        if time.monotonic() - last_used > self.STALE_S:
            connection.close()
            connection.connect()
        started = time.perf_counter()
        connection.request("POST", where.path, json.dumps(body).encode(), JSON)
        with connection.getresponse() as reply:
            events = _events(reply)
            reply.read()   # the rest of the answer, so the connection can carry the next request
        with self.lock:
            self.idle[where.netloc].append((time.monotonic(), connection))
        return started, events


CONNECTIONS = KeptOpen()


def via_gateway(base: str, prompt: str, tokens: int) -> tuple[float, int, float]:
    """(TTFT s, completion tokens, end time) of one streamed /v1/completions request."""
    body = {"model": "llm", "prompt": prompt, "max_tokens": tokens, "temperature": 0, "stream": True,
            "stream_options": {"include_usage": True}}
    started, events = CONNECTIONS.sse(f"{base}/completions", body)
    first = next(t for t, e in events if e.get("choices") and e["choices"][0]["text"])
    return first - started, events[-1][1]["usage"]["completion_tokens"], events[-1][0]


def direct(http_url: str, prompt: str, tokens: int) -> tuple[float, int, float]:
    """The same request to Triton's generate_stream of the `llm` ensemble."""
    body = {"text_input": prompt, "max_tokens": tokens, "temperature": 0.0}
    started, events = CONNECTIONS.sse(f"http://{http_url}/v2/models/llm/generate_stream", body)
    first = next(t for t, e in events if e.get("text_output"))
    return first - started, sum(len(np.atleast_1d(e.get("output_ids", []))) for _, e in events), events[-1][0]


class Relay:
    """The relay floor's request: the prompt's ids, encoded before the clock starts, posted to /floor/generate."""

    def __init__(self, encode: Callable[[str], np.ndarray]) -> None:
        self.encode = encode

    def __call__(self, base: str, prompt: str, tokens: int) -> tuple[float, int, float]:
        body = {"ids": self.encode(prompt).tolist(), "max_tokens": tokens}
        started, events = CONNECTIONS.sse(f"{base}/floor/generate", body)
        first = next(t for t, e in events if e["text"])
        return first - started, sum(e["tokens"] for _, e in events), events[-1][0]


class RawGrpc:
    """The gateway's Triton request for a prompt (its ids to `generate`, the outputs the gateway asks for) as one
    ModelStreamInfer call through grpcio's asyncio stubs (tritonclient.grpc's generated service_pb2_grpc, no
    tritonclient code on the way), on one kept-open channel and event loop, each request on a stream an earlier one
    left open (as the gateway keeps them): the least a Python gRPC client waits for Triton's first response."""

    def __init__(self, grpc_url: str, encode: Callable[[str], np.ndarray]) -> None:
        self.encode = encode
        self.idle: list[tuple[asyncio.Queue, Any]] = []
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.stub = self._run(self._connect(grpc_url))

    def _run(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(600)

    async def _connect(self, grpc_url: str):
        import grpc
        from tritonclient.grpc import service_pb2_grpc

        return service_pb2_grpc.GRPCInferenceServiceStub(grpc.aio.insecure_channel(grpc_url))

    def __call__(self, _: str, prompt: str, tokens: int) -> tuple[float, int, float]:
        return self._run(self._stream(prompt, tokens))

    def close(self) -> None:
        """Cancels the kept streams (their calls would otherwise be left to the garbage collector)."""
        for _, call in self.idle:
            self.loop.call_soon_threadsafe(call.cancel)

    def _open(self, request) -> tuple[asyncio.Queue, Any]:
        """(the queue its later requests go in, the call) of a kept stream that `request` goes on next."""
        if self.idle:
            queue, call = self.idle.pop()
        else:
            queue = asyncio.Queue()

            async def written():
                while True:
                    yield await queue.get()
            call = self.stub.ModelStreamInfer(written())
        queue.put_nowait(request)
        return queue, call

    async def _stream(self, prompt: str, tokens: int) -> tuple[float, int, float]:
        from tritonclient.grpc import service_pb2

        from tritonkit.pipelines.llm.gateway.model import ENTRY_MODEL, OUTPUTS

        ids = self.encode(prompt).astype("<i8")
        request = service_pb2.ModelInferRequest(model_name=ENTRY_MODEL)
        request.parameters["triton_enable_empty_final_response"].bool_param = True
        for name, datatype, shape, data in (("input_ids", "INT64", [1, ids.size], ids.tobytes()),
                                            ("max_tokens", "INT32", [1, 1], struct.pack("<i", tokens)),
                                            ("temperature", "FP32", [1, 1], struct.pack("<f", 0.0))):
            request.inputs.add(name=name, datatype=datatype, shape=shape)
            request.raw_input_contents.append(data)
        for name in OUTPUTS:
            request.outputs.add(name=name)
        arrivals, count = [], 0
        started = time.perf_counter()
        queue, call = self._open(request)
        replies = call.__aiter__()   # the call's one iterator: a kept stream's next request reads on from it
        async for reply in replies:
            response, now = reply.infer_response, time.perf_counter()
            names = [o.name for o in response.outputs]
            if "text_output" in names:
                count += len(response.raw_output_contents[names.index("token_ids")]) // 8   # INT64 ids
                if len(response.raw_output_contents[names.index("text_output")]) > 4:   # more than a length prefix
                    arrivals.append(now)
            final = response.parameters.get("triton_final_response")
            if final is not None and final.bool_param:
                break
        self.idle.append((queue, call))
        return arrivals[0] - started, count, arrivals[-1]


def llm_round(call, target: str, c: int, tokens: int) -> tuple[float, float]:
    """(tokens/s, mean TTFT s) of c concurrent requests."""
    started = time.perf_counter()
    with ThreadPoolExecutor(c) as pool:
        results = list(pool.map(lambda i: call(target, PROMPTS[i % len(PROMPTS)], tokens), range(c)))
    end = max(r[2] for r in results)
    return sum(r[1] for r in results) / (end - started), statistics.mean(r[0] for r in results)


def _built(name: str, make) -> Path:
    from tritonkit.export.progress import StderrProgress
    from tritonkit.repository.build import build

    folder = FOLDER / name
    return build(make(folder), progress=StderrProgress()).repository


def _gateway_pid() -> int:
    """The `tritonkit gateway` process this benchmark started (a child of this process)."""
    children = [int(pid) for task in Path("/proc/self/task").iterdir()
                for pid in (task / "children").read_text().split()]
    for pid in children:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if b"tritonkit" in command and b"gateway" in command:
            return pid
    raise RuntimeError("the gateway process was not found among this process's children")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` (all its threads) so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_llm(rounds: int, tokens: int) -> tuple[dict[str, dict[int, tuple[float, float]]], float]:
    """Medians per way and concurrency of (tokens/s, TTFT s), and the median share of the machine's CPU the gateway
    process used during its c=8 rounds (what it takes from the model on a CPU-bound machine)."""
    from examples.llm.project import write_project
    from tritonkit.pipelines.llm.export.prepare import write_assets
    from tritonkit.pipelines.llm.gateway.model import LlmFiles
    from tritonkit.serve.server import EmbeddedServer

    repository = _built("smollm2", lambda f: write_project(f, "smollm2",
                                                           write_assets("smollm2", f / "prepared_assets")))
    medians: dict[str, dict[int, tuple[float, float]]] = {name: {} for name in WAYS}
    with EmbeddedServer(repository, work_dir=repository.parent / ".tritonkit", startup_timeout=600) as server, \
            gateway(repository.parent, server, "--repository", str(repository)) as base, \
            floor_gateway(repository.parent, server.grpc_url) as floor_base:
        encode = LlmFiles.load(str(repository)).encode
        kept = RawGrpc(server.grpc_url, encode)
        ways = {"gateway": (via_gateway, base), "direct": (direct, server.http_url), "direct gRPC kept": (kept, ""),
                "floor relay": (Relay(encode), floor_base)}
        pid, shares = _gateway_pid(), []
        for way in ways.values():   # warm-up: every way once
            llm_round(way[0], way[1], 2, 4)
        for c in (1, 8):
            runs: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
            for r in range(rounds):
                for name in list(ways)[r % len(ways):] + list(ways)[:r % len(ways)]:   # each way first in turn
                    cpu, started = _cpu_seconds(pid), time.perf_counter()
                    runs[name].append(llm_round(*ways[name], c, tokens))
                    if name == "gateway" and c == 8:
                        wall = (time.perf_counter() - started) * (os.cpu_count() or 1)
                        shares.append((_cpu_seconds(pid) - cpu) / wall)
            for name, values in runs.items():
                medians[name][c] = (statistics.median(v[0] for v in values), statistics.median(v[1] for v in values))
                tokens_s, ttft = medians[name][c]
                print(f"llm c={c} {name:8s} tokens/s {tokens_s:7.1f}  TTFT {ttft * 1000:7.1f} ms  "
                      f"(rounds: {', '.join(f'{v[0]:.1f}' for v in values)})", file=sys.stderr)
        kept.close()
    share = statistics.median(shares)
    print(f"llm c=8 the gateway process used {share:.1%} of the machine's CPU ({os.cpu_count()} cores; rounds: "
          f"{', '.join(f'{v:.1%}' for v in shares)})", file=sys.stderr)
    return medians, share


@contextmanager
def floor_gateway(folder: Path, triton_grpc_url: str = "") -> Iterator[str]:
    """benchmarks/gateway_floor.py on a free port (the gateway's stack with a fixed transcript, and the relay to
    `triton_grpc_url` when given); yields its root URL."""
    [port] = quiet_ports(1)
    log_path = folder / f"floor-{port}.log"
    log = log_path.open("w")
    process = subprocess.Popen([sys.executable, str(Path(__file__).with_name("gateway_floor.py")), str(port)]
                               + ([triton_grpc_url] if triton_grpc_url else []),
                               stdout=log, stderr=subprocess.STDOUT,
                               env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                   filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))})
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2).read()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the floor did not start: {log_path.read_text()}") from None
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()


def recordings(folder: Path) -> list[Path]:
    """The held-out clips joined into ~10 s recordings (benchmarks/asr.py's `joined`), written as 16 kHz WAVs."""
    from benchmarks.asr import Clip, joined
    from examples.asr.heldout import read_heldout, read_wav, write_wav

    out = folder / "recordings"
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for index, clip in enumerate(joined([Clip(*read_wav(u.path), u.words) for u in read_heldout()], 10.0)):
        paths.append(out / f"recording-{index}.wav")
        write_wav(paths[-1], clip.pcm, clip.rate)
    return paths


def bench_asr(rounds: int) -> tuple[dict[str, dict[str, float]], dict[str, int]]:
    """Per audio kind ("short": command clips, "long": ~10 s recordings), median seconds per transcription of the
    gateway, the floor (the gateway's HTTP + multipart + decode, no Triton) and direct; and the requests per median."""
    import tritonclient.grpc as grpcclient

    from examples.asr.heldout import read_heldout, read_wav
    from tritonkit.serve.server import EmbeddedServer

    folder = FOLDER / "asr"
    if not (folder / "tritonkit.yaml").is_file():
        subprocess.run([sys.executable, "-m", "tritonkit", "init", str(folder), "--pipeline", "asr"], check=True,
                       stdout=sys.stderr)
    repository = _built("asr", lambda f: f / "tritonkit.yaml")
    audio = {"short": [u.path for u in read_heldout()[:8]], "long": recordings(folder)}
    times: dict[str, dict[str, list[float]]] = {kind: {"gateway": [], "floor": [], "direct": []} for kind in audio}
    with EmbeddedServer(repository, work_dir=folder / ".tritonkit", startup_timeout=300) as server, \
            gateway(folder, server, "--repository", str(repository)) as base, floor_gateway(folder) as floor_base:
        client = grpcclient.InferenceServerClient(server.grpc_url)

        def native(path: Path) -> None:
            pcm, rate = read_wav(path)
            inputs = [grpcclient.InferInput("PCM", [1, pcm.size], "FP32"),
                      grpcclient.InferInput("SAMPLE_RATE", [1, 1], "INT32")]
            inputs[0].set_data_from_numpy(pcm[None].astype(np.float32))
            inputs[1].set_data_from_numpy(np.array([[rate]], np.int32))
            client.infer("asr", inputs)

        def uploader(url: str) -> Callable[[Path], None]:
            """Multipart uploads over one kept-open HTTP connection, as the gRPC channel is kept open."""
            host, port = url.split("//")[1].split("/")[0].split(":")
            connection = http.client.HTTPConnection(host, int(port), timeout=120)

            def upload(path: Path) -> None:
                boundary = "tritonkitbench"
                body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nasr\r\n--{boundary}\r\n"
                        f"Content-Disposition: form-data; name=\"file\"; filename=\"{path.name}\"\r\n"
                        "Content-Type: audio/wav\r\n\r\n"
                        ).encode() + path.read_bytes() + f"\r\n--{boundary}--\r\n".encode()
                connection.request("POST", "/v1/audio/transcriptions", body,
                                   {"Content-Type": f"multipart/form-data; boundary={boundary}"})
                reply = connection.getresponse()
                assert reply.status == 200, reply.read()
                reply.read()
            return upload

        ways = {"gateway": uploader(base), "floor": uploader(floor_base), "direct": native}
        for files in audio.values():
            for way in ways.values():
                way(files[0])
        names = list(ways)
        for r in range(rounds):
            for kind, files in audio.items():
                for name in names[r % 3:] + names[:r % 3]:   # each side first in turn
                    for path in files:
                        started = time.perf_counter()
                        ways[name](path)
                        times[kind][name].append(time.perf_counter() - started)
    return ({kind: {name: statistics.median(values) for name, values in sides.items()}
             for kind, sides in times.items()},
            {kind: len(sides["direct"]) for kind, sides in times.items()})


def _rows(llm: dict[str, dict[int, tuple[float, float]]], gateway_cpu: float, asr: dict[str, dict[str, float]],
          counts: dict[str, int]) -> list[tuple[str, str, str]]:
    rows = [(f"llm c={c} {name}: tokens/s, TTFT", f"{llm[name][c][0]:.1f}, {llm[name][c][1] * 1000:.0f} ms", how)
            for c in (1, 8) for name, how in WAYS.items()]
    rows.append(("llm c=8 gateway process CPU", f"{gateway_cpu:.1%}", f"of the machine's {os.cpu_count()} cores"))
    what = {"short": "command clips (~1.4 s)", "long": "~10 s recordings"}
    notes = {"gateway": "/v1/audio/transcriptions", "floor": "the gateway's HTTP, multipart, decode; fixed transcript",
             "direct": "gRPC to the asr ensemble"}
    for kind, sides in asr.items():
        rows += [(f"transcription, {what[kind]}: {name}", f"{ms * 1000:.1f} ms",
                  f"{notes[name]}; median of {counts[kind]}") for name, ms in sides.items()]
    return rows


def main(argv: list[str] | None = None) -> int:
    from benchmarks.report import print_report

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=32)
    args = parser.parse_args(argv)
    llm, gateway_cpu = bench_llm(args.rounds, args.tokens)
    asr, counts = bench_asr(args.rounds)
    long, short = asr["long"], asr["short"]
    print_report(_rows(llm, gateway_cpu, asr, counts), {
        "gateway_over_direct_tokens_s_c8": round(llm["gateway"][8][0] / llm["direct"][8][0], 3),
        "gateway_ttft_over_direct_c1": round(llm["gateway"][1][1] / llm["direct"][1][1], 3),
        # the gateway talks gRPC to generate: its TTFT over the same Triton request as a bare grpcio stream kept open
        # from an earlier request, and that stream's TTFT over HTTP generate_stream's of the llm ensemble
        "gateway_ttft_over_direct_grpc_c1": round(llm["gateway"][1][1] / llm["direct gRPC kept"][1][1], 3),
        "ttft_floor_raw_grpc_kept_over_http_c1": round(llm["direct gRPC kept"][1][1] / llm["direct"][1][1], 3),
        # the relay floor (the gateway's stack and Triton client as a second process, nothing else) over direct: the
        # least any gateway on this stack could reach; and the gateway over it (what its OpenAI work adds)
        "floor_relay_ttft_over_direct_c1": round(llm["floor relay"][1][1] / llm["direct"][1][1], 3),
        "floor_relay_over_direct_tokens_s_c8": round(llm["floor relay"][8][0] / llm["direct"][8][0], 3),
        "gateway_ttft_over_floor_relay_c1": round(llm["gateway"][1][1] / llm["floor relay"][1][1], 3),
        # on ~10 s recordings; the least any gateway on this HTTP stack could reach: (floor + direct) / direct
        "transcription_gateway_over_direct": round(long["gateway"] / long["direct"], 3),
        "transcription_floor_over_direct": round((long["floor"] + long["direct"]) / long["direct"], 3),
        # the same on the ~1.4 s command clips, where the per-request cost weighs most
        "transcription_gateway_over_direct_short": round(short["gateway"] / short["direct"], 3),
        "transcription_floor_over_direct_short": round((short["floor"] + short["direct"]) / short["direct"], 3),
        # the c=8 ratio a gateway costing only its measured CPU allows where the model is CPU-bound
        "tokens_s_c8_floor": round(1 - gateway_cpu, 3)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
