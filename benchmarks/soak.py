"""Soak: the example project and the LLM starter on the embedded Triton, every model driven at once.

Builds both projects in a temporary folder, serves each repository on its own embedded server (both have a
model named `preprocess`), then runs `--concurrency`
workers (half HTTP, half gRPC) for `--seconds`, each replaying the smoke golden cases (`read_cases`) of
every model in turn: plain requests, sequences (interleaved correlation ids unique per replay), decoupled
streams and the ensembles. The LLM pipeline's `generate` (gRPC streams of tokens, and one-response requests that
do not ask for token_ids) and `llm` ensemble (streamed text over HTTP and gRPC) have no golden files: their greedy
outputs for fixed prompts are computed in process at start (`llm_jobs`). Every answer is compared with its known value.
Reports requests, errors, wrong answers and p50/p99 per model (of the measured run), and resident memory per process
group (each server, each model's stubs), sampled every `--sample-every` seconds.

Memory: a `--warmup` phase (default 10 s of the same mix; its errors and wrong answers still count) comes first,
because every process grows a few MiB on its first requests (allocator pools, onnxruntime arenas, shared-memory
buffers) and then levels off. The table shows RSS cold (before any request), after warm-up and at the end, the
growth from each, and the growth over the second half of the measured run: a leak keeps climbing there, warm-up
does not. `rss_growth_mb` is the growth of all processes after warm-up.

    .venv/bin/python benchmarks/soak.py --seconds 60 --concurrency 64

Last line: {"requests": n, "errors": e, "wrong": w, "p99_ms_max": p, "rss_growth_mb": g}
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import psutil

from tritonkit.golden import GoldenCase, read_cases, read_tolerances, tolerance_for
from tritonkit.pipelines.llm.runtime.engine import StepOutput
from tritonkit.pipelines.llm.runtime.loading import load_engine
from tritonkit.pipelines.llm.runtime.sampling import SamplingParams
from tritonkit.pipelines.llm.runtime.text import text_delta
from tritonkit.serve.server import EmbeddedServer
from tritonkit.serve.stubs import stub_pids
from tritonkit.smoke.clients import Sequence, open_client
from tritonkit.smoke.compare import value_mismatch
from tritonkit.validate.repository_check import validate_repository

ROOT = Path(__file__).resolve().parents[1]
_IDS = itertools.count((1 << 40) + 1)  # correlation ids, unique per sequence replayed
_IDS_LOCK = threading.Lock()


@dataclass
class Job:
    server: EmbeddedServer
    model: str
    case: GoldenCase
    tolerances: dict  # the golden folder's tolerance.json, read once (golden.read_tolerances)
    outputs: list[str]
    #: held for the whole replay: a sequence model's free slots (two per replay), the LLM's live-stream limit
    gate: threading.Semaphore | None = None
    flat: bool = False  # compare values whatever the shape (the LLM's ids arrive [1, n], [n] or [0])


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    wrong: int = 0
    first_problem: str = ""


def _cli(*args: str, cwd: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "tritonkit", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"tritonkit {' '.join(args)} failed in {cwd}:\n{done.stderr[-3000:]}")


def build_projects(scratch: Path) -> list[Path]:
    """Both projects built; their repositories."""
    example = scratch / "example"
    example.mkdir()
    shutil.copy(ROOT / "tritonkit.yaml", example)
    for folder in ("ensembles", "models", "examples"):
        shutil.copytree(ROOT / folder, example / folder, ignore=shutil.ignore_patterns("__pycache__"))
    _cli("build", cwd=example)
    _cli("init", str(scratch / "llm"), "--pipeline", "llm", cwd=scratch)
    _cli("build", cwd=scratch / "llm")
    return [example / "model_repository", scratch / "llm" / "model_repository"]


def jobs_for(server: EmbeddedServer, repository: Path) -> list[Job]:
    configs = validate_repository(repository)
    jobs = []
    for name, config in sorted(configs.items()):
        golden = repository / name / "golden"
        outputs = [t.name for t in config.output]
        # More live sequences than slots starve: a client holding one sequence open while its other one waits
        # for a slot lets the first time out (max_sequence_idle_microseconds), so replays share the slots.
        slots = max(1, config.max_batch_size) * max(1, sum(g.count for g in config.instance_group))
        gate = threading.Semaphore(max(1, slots // 2))
        tolerances = read_tolerances(golden)
        jobs += [Job(server, f"{repository.parent.name}/{name}", case, tolerances, outputs,
                     gate if case.kind == "sequence" else None)
                 for case in read_cases(golden)]
    return jobs


#: Prompts the LLM models are driven with; their greedy outputs are computed in process at start.
LLM_PROMPTS = ("Hello", "Triton soak", "in-flight batching")
LLM_MAX_TOKENS = 8


def _reason(out: StepOutput) -> np.ndarray:
    return np.array([(out.finish_reason or "").encode()], dtype=object)


def llm_jobs(server: EmbeddedServer, repository: Path) -> list[Job]:
    """Known answers for `generate` (gRPC stream of ids, and one response when token_ids is not asked for) and
    the `llm` ensemble (streamed text over HTTP and gRPC): each prompt's greedy generation run step by step in
    process by the same engine code, over the built model, so every streamed response is known before the load
    starts."""
    folder = repository / "generate" / "1"
    loaded = load_engine(folder, {})
    engine, codec = loaded.engine, loaded.codec
    # generate refuses generations beyond its max_streams (as it should): the replays streaming through it share
    # that many places, as clients that respect the limit do, so a refusal here would be an error
    limit_param = validate_repository(repository)["generate"].parameters.get("max_streams")
    streams = threading.Semaphore(int(limit_param.string_value) if limit_param else 1 << 20)
    jobs = []
    for k, prompt in enumerate(LLM_PROMPTS):
        ids = codec.encode(prompt)
        engine.admit(k, ids, SamplingParams(max_tokens=LLM_MAX_TOKENS))
        steps = []
        while k in engine:
            steps += engine.step([k])
        last = steps[-1]
        limit = np.array([[LLM_MAX_TOKENS]], np.int32)
        by_ids: dict[str, np.ndarray] = {"input_ids": np.asarray(ids, np.int64)[None], "max_tokens": limit}
        by_text: dict[str, np.ndarray] = {"text_input": np.array([[prompt.encode()]], dtype=object),
                                          "max_tokens": limit}
        generate = GoldenCase(f"greedy-{k}", "stream", [(by_ids, {})], atol=0, rtol=0, responses=[
            {"token_ids": np.asarray(out.token_ids, np.int64), "finish_reason": _reason(out)} for out in steps])
        complete = GoldenCase(f"greedy-{k}-once", "stream", [(by_ids, {})], atol=0, rtol=0, responses=[{
            "generated_ids": np.asarray(last.generated, np.int64), "finish_reason": _reason(last)}])
        ensemble = GoldenCase(f"greedy-{k}", "stream", [(by_text, {})], atol=0, rtol=0, responses=[
            {"output_ids": np.asarray(out.token_ids, np.int64), "finish_reason": _reason(out),
             "text_output": np.array([text_delta(codec.decode, out.generated, len(out.token_ids), (),
                                                 out.finish_reason is not None).encode()], dtype=object)}
            for out in steps])
        for model, case in (("generate", generate), ("generate", complete), ("llm", ensemble)):
            outputs = list(case.responses[0])
            jobs.append(Job(server, f"{repository.parent.name}/{model}", case,
                            read_tolerances(repository / model / "golden"), outputs,
                            streams, flat=True))
    return jobs


def _problems(job: Job, expected: dict[str, np.ndarray], actual: dict[str, np.ndarray]) -> list[str]:
    found = []
    for name, want in expected.items():
        tol = tolerance_for(job.tolerances, job.case, name)
        got = actual.get(name)
        if job.flat and got is not None:
            got = np.asarray(got).reshape(-1)
        problem = value_mismatch(name, want, got, tol["atol"], tol["rtol"])
        if problem:
            found.append(problem)
    return found


def replay(clients: Mapping[int, object], job: Job) -> list[str]:
    """One replay of `job` (within its gate); the mismatches found (an exception is an error)."""
    with job.gate or contextlib.nullcontext():
        return _replay(clients, job)


def _replay(clients: Mapping[int, object], job: Job) -> list[str]:
    client: Any = clients[id(job.server)]
    case, model = job.case, job.model.split("/", 1)[1]
    if case.kind == "request":
        inputs, expected = case.steps[0]
        return _problems(job, expected, client.infer(model, inputs, job.outputs))
    if case.kind == "sequence":
        with _IDS_LOCK:
            ids = (next(_IDS), next(_IDS))
        last, found = len(case.steps) - 1, []
        for k, (inputs, expected) in enumerate(case.steps):
            for seq_id in ids:  # two sequences interleaved step by step
                got = client.infer(model, inputs, job.outputs, Sequence(seq_id, start=k == 0, end=k == last))
                found += _problems(job, expected, got)
        return found
    inputs, _ = case.steps[0]
    got = client.stream(model, inputs, job.outputs)
    if len(got) != len(case.responses):
        return [f"expected {len(case.responses)} streamed responses, got {len(got)}"]
    return [p for want, have in zip(case.responses, got) for p in _problems(job, want, have)]


def _usable(job: Job, protocol: str) -> bool:
    """HTTP generate_stream takes scalar inputs only (as in smoke)."""
    return not (job.case.kind == "stream" and protocol == "http"
                and any(v.size > 1 for v in job.case.steps[0][0].values()))


def worker(index: int, servers: list[EmbeddedServer], jobs: list[Job], phases: list[tuple[float, dict[str, Stats]]],
           lock: threading.Lock) -> None:
    """Replays until the last phase's end; each replay counts in the phase (warm-up, run) it started in."""
    protocol = "http" if index % 2 == 0 else "grpc"
    clients = {id(s): open_client(protocol, s.http_url if protocol == "http" else s.grpc_url) for s in servers}
    mine = [j for j in jobs if _usable(j, protocol)]
    try:
        for job in itertools.islice(itertools.cycle(mine), index, None):
            now = time.monotonic()
            stats = next((phase for end, phase in phases if now < end), None)
            if stats is None:
                return
            started = time.perf_counter()
            try:
                problems, error = replay(clients, job), ""
            except Exception as exc:  # noqa: BLE001 - counted and reported
                problems, error = [], f"{type(exc).__name__}: {str(exc)[:200]}"
            elapsed = time.perf_counter() - started
            with lock:
                entry = stats[job.model]
                entry.latencies.append(elapsed)
                if error:
                    entry.errors += 1
                elif problems:
                    entry.wrong += 1
                if (error or problems) and not entry.first_problem:
                    entry.first_problem = f"{protocol} {job.case.kind}:{job.case.name}: {error or problems[0]}"
    finally:
        for client in clients.values():
            client.close()


def rss_by_group(servers: list[EmbeddedServer]) -> dict[str, float]:
    """Resident MiB of each server (`<project> server`) and of its stubs summed per model (`<project>/<model>`),
    so growth can be pinned on one process rather than on the sum."""
    found: dict[str, float] = defaultdict(float)
    for server in servers:
        project = server.repository.parent.name
        groups = {server.pid: f"{project} server"}
        groups.update({pid: f"{project}/{model}" for pid, model in stub_pids(server.pid).items()})
        for pid, group in groups.items():
            with contextlib.suppress(psutil.Error):
                found[group] += psutil.Process(pid).memory_info().rss / 2**20
    return dict(found)


class RssSampler:
    """Samples `rss_by_group` every `every` seconds in a thread, so a curve shows warm-up (levels off) apart from
    a leak (keeps climbing)."""

    def __init__(self, servers: list[EmbeddedServer], every: float) -> None:
        self.servers, self.every = servers, every
        self.samples: list[tuple[float, dict[str, float]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._origin = time.monotonic()

    def sample(self) -> dict[str, float]:
        """One sample now, kept in the curve."""
        taken = rss_by_group(self.servers)
        self.samples.append((time.monotonic() - self._origin, taken))
        return taken

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.sample()

    def __enter__(self) -> RssSampler:
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _total(sample: dict[str, float]) -> float:
    return sum(sample.values())


def memory_report(samples: list[tuple[float, dict[str, float]]], warm_at: float, points: int = 8) -> list[str]:
    """Per process group: RSS cold (before any request), after warm-up, at the end, the growth from each, the
    growth over the second half of the measured run (what warm-up cannot explain: it should be about 0), and the
    curve after warm-up (at most `points` samples)."""
    cold = samples[0][1]
    after = [(t, s) for t, s in samples if t >= warm_at]
    warm, end = after[0][1], after[-1][1]
    middle = (after[0][0] + after[-1][0]) / 2
    half = min(after, key=lambda ts: abs(ts[0] - middle))[1]
    shown = after[:: max(1, -(-len(after) // points))]
    if shown[-1] is not after[-1]:
        shown.append(after[-1])
    lines = [f"{'RSS MiB':<24} {'cold':>6} {'warm':>6} {'end':>6} {'+cold':>6} {'+warm':>6} {'+2nd half':>9}  "
             "after warm-up at " + ", ".join(f"{t - warm_at:.0f}" for t, _ in shown) + " s"]
    rows = [(group, lambda s, g=group: s.get(g, 0.0)) for group in sorted(set(cold) | set(end))]
    for group, value in [*rows, ("all", _total)]:
        c, w, e, h = (value(s) for s in (cold, warm, end, half))
        lines.append(f"{group:<24} {c:>6.0f} {w:>6.0f} {e:>6.0f} {e - c:>+6.1f} {e - w:>+6.1f} {e - h:>+9.1f}  "
                     + " ".join(f"{value(s):.0f}" for _, s in shown))
    return lines


def _sum(stats: dict[str, Stats]) -> tuple[int, int, int]:
    return (sum(len(e.latencies) for e in stats.values()), sum(e.errors for e in stats.values()),
            sum(e.wrong for e in stats.values()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog="example: .venv/bin/python "
                                     "benchmarks/soak.py --seconds 180 --warmup 0 --sample-every 10  (is it warm-up?)")
    parser.add_argument("--seconds", type=float, default=60.0, help="measured run, after the warm-up")
    parser.add_argument("--warmup", type=float, default=10.0,
                        help="seconds of the same mix first; the start RSS is taken after it (0: none)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--sample-every", type=float, default=5.0, help="seconds between RSS samples")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tritonkit-soak-") as tmp:
        scratch = Path(tmp)
        repositories = build_projects(scratch)
        with contextlib.ExitStack() as stack:
            servers = [
                stack.enter_context(EmbeddedServer(repo, work_dir=repo.parent / ".tritonkit")) for repo in repositories
            ]
            jobs = [job for server, repo in zip(servers, repositories) for job in jobs_for(server, repo)]
            jobs += llm_jobs(servers[-1], repositories[-1])
            kinds = sorted({j.case.kind for j in jobs})
            print(f"{len(jobs)} known-answer cases over {len({j.model for j in jobs})} models ({', '.join(kinds)})",
                  file=sys.stderr)
            load_before = psutil.getloadavg()
            warmup: dict[str, Stats] = defaultdict(Stats)
            stats: dict[str, Stats] = defaultdict(Stats)
            lock = threading.Lock()
            sampler = stack.enter_context(RssSampler(servers, args.sample_every))
            warm_end = time.monotonic() + args.warmup
            phases = [(warm_end, warmup), (warm_end + args.seconds, stats)]
            threads = [threading.Thread(target=worker, args=(i, servers, jobs, phases, lock))
                       for i in range(args.concurrency)]
            for thread in threads:
                thread.start()
            warm_at = 0.0  # without a warm-up, growth counts from the cold sample
            if args.warmup > 0:
                time.sleep(max(0.0, warm_end - time.monotonic()))
                sampler.sample()
                warm_at = sampler.samples[-1][0]
            for thread in threads:
                thread.join()
            for server in servers:
                server.check()
            sampler.sample()
            load_after = psutil.getloadavg()
    print(f"{'model':<22} {'requests':>8} {'errors':>6} {'wrong':>5} {'p50 ms':>8} {'p99 ms':>8}")
    p99s = []
    for model, entry in sorted(stats.items()):
        lat = np.array(entry.latencies) * 1000
        p50, p99 = (float(np.percentile(lat, 50)), float(np.percentile(lat, 99))) if lat.size else (0.0, 0.0)
        p99s.append(p99)
        print(f"{model:<22} {lat.size:>8} {entry.errors:>6} {entry.wrong:>5} {p50:>8.1f} {p99:>8.1f}"
              + (f"  first problem: {entry.first_problem}" if entry.first_problem else ""))
    for model, entry in sorted(warmup.items()):
        if entry.first_problem:
            print(f"warm-up {model}: first problem: {entry.first_problem}")
    warm_n, warm_errors, warm_wrong = _sum(warmup)
    print(f"warm-up {args.warmup:.0f} s (not in the table): {warm_n} replays, {warm_errors} errors, {warm_wrong} wrong")
    for line in memory_report(sampler.samples, warm_at):
        print(line)
    print(f"load average {load_before[0]:.1f} -> {load_after[0]:.1f} on {psutil.cpu_count()} cores; "
          f"{args.seconds:.0f} s at concurrency {args.concurrency} after {args.warmup:.0f} s warm-up; "
          "rss_growth_mb = growth of all processes after warm-up")
    requests, errors, wrong = _sum(stats)
    end = sampler.samples[-1][1]
    warm = next(s for t, s in sampler.samples if t == warm_at)
    summary = {"requests": requests, "errors": errors + warm_errors, "wrong": wrong + warm_wrong,
               "p99_ms_max": round(max(p99s, default=0.0), 1),
               "rss_growth_mb": round(_total(end) - _total(warm), 1)}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
