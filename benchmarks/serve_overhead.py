"""Serving overhead: MiniLM (ONNX, sequence length 128) in-process vs tritonkit's embedded Triton vs PyTriton.

Usage: python benchmarks/serve_overhead.py [--concurrency 8] [--threads 2] [--rounds 3] [--keep DIR]

Every side gets the same onnxruntime thread budget (--threads, in all) and the same runner with the same
session options (tritonkit's fallback runner: sequential execution, full graph optimization, idle workers
sleep):
  1. in-process onnxruntime, one session with the whole budget, best of batch sizes 1/8/16 (the limit);
  2. `tritonkit build` + `tritonkit serve` (embedded Triton 2.51, dynamic batching [8, 16] with 2 ms delay;
     the ONNX model runs through tritonkit's Python-backend fallback), 2 instances x budget/2 threads and
     1 instance x budget threads, both loaded in one server;
  3. PyTriton 0.7 serving the same ONNX file with the same runner and batching, in the same two layouts.
Served throughput comes from perf_analyzer (gRPC, concurrency N, identical tokenized input data). The sides
run in alternating rounds (the machine is shared and noisy) and each figure is the median over rounds; a
served side's figure is its better layout. Prints a table; the LAST line is
{"served_over_inprocess": x, "tritonkit_over_pytriton": y}.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

SEQ_LEN = 128
MAX_BATCH = 16
SPEC = f"""
version: 1
models:
  minilm:
    source: {{python: examples.models.minilm:build, kwargs: {{seq_len: {SEQ_LEN}}}}}
    export: {{dynamic_axes: {{input_ids: {{1: seq}}, attention_mask: {{1: seq}}}},
              verify: {{lengths: {{seq: [16]}}, golden_samples: 1}}}}
    max_batch_size: {MAX_BATCH}
    dynamic_batching: {{preferred_batch_size: [8, 16], max_queue_delay_microseconds: 2000}}
    instance_group: [{{kind: KIND_CPU, count: 1}}]
"""
Layout = tuple[int, int]  # (instances, intra-op threads per instance)


def layouts(budget: int) -> list[Layout]:
    """The ways to spend the thread budget: one instance with all of it, and two with half each."""
    return [(1, budget)] + ([(2, budget // 2)] if budget >= 2 else [])


def layout_name(layout: Layout) -> str:
    return f"minilm_{layout[0]}x{layout[1]}"


def tokens(count: int = 16) -> dict[str, np.ndarray]:
    """Real token ids of varied sentences, padded to SEQ_LEN (batch of `count`)."""
    from examples.models.minilm import SENTENCES, tokenize

    sentences = [f"{SENTENCES[i % len(SENTENCES)]} ({i})" for i in range(count)]
    return {k: v.numpy() for k, v in tokenize(sentences, SEQ_LEN).items()}


def perf_input_file(path: Path) -> Path:
    """perf_analyzer --input-data JSON with the same token rows the in-process run uses."""
    data = tokens()
    rows = [
        {name: {"content": data[name][i].tolist(), "shape": [SEQ_LEN]} for name in data}
        for i in range(len(data["input_ids"]))
    ]
    path.write_text(json.dumps({"data": rows}))
    return path


def build_project(root: Path) -> Path:
    """Exports MiniLM with `tritonkit build`; returns the built repository."""
    shutil.copytree(REPO_ROOT / "examples", root / "examples", ignore=shutil.ignore_patterns("__pycache__"),
                    dirs_exist_ok=True)
    (root / "tritonkit.yaml").write_text(SPEC)
    subprocess.run([sys.executable, "-m", "tritonkit", "build"], cwd=root, check=True)
    return root / "model_repository"


def layout_repository(built: Path, target: Path, budget: int) -> Path:
    """The built model once per layout (configs edited as protobuf: name, instance count, thread count)."""
    from google.protobuf import text_format
    from tritonclient.grpc import model_config_pb2 as pb

    shutil.rmtree(target, ignore_errors=True)
    base = text_format.Parse((built / "minilm" / "config.pbtxt").read_text(), pb.ModelConfig())
    for layout in layouts(budget):
        folder = target / layout_name(layout)
        shutil.copytree(built / "minilm", folder, copy_function=os.link)
        config = pb.ModelConfig()
        config.CopyFrom(base)
        config.name = layout_name(layout)
        config.instance_group[0].count = layout[0]
        config.parameters["intra_op_thread_count"].string_value = str(layout[1])
        (folder / "config.pbtxt").unlink()  # a hard link to the built file: write a new one
        (folder / "config.pbtxt").write_text(text_format.MessageToString(config))
    return target


def runner_for(onnx_path: str | Path, threads: int):
    """The fallback's runner with the fallback's session options (what every side runs)."""
    from tritonkit.serve.onnx_runner import OnnxRunner, options_from_config

    config = {"parameters": {"intra_op_thread_count": {"string_value": str(threads)}}}
    return OnnxRunner(onnx_path, ["sentence_embedding"], batched=True, options=options_from_config(config))


def in_process(runner, seconds: float) -> dict[int, float]:
    """Sequences/s per batch size, one session, one caller."""
    data = tokens()
    results = {}
    for batch in (1, 8, 16):
        feeds = {k: v[:batch] for k, v in data.items()}
        runner.run(feeds)
        done, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds / 3:
            runner.run(feeds)
            done += batch
        results[batch] = done / (time.perf_counter() - started)
    return results


def perf(url: str, model: str, input_data: Path, concurrency: int, window: int = 100) -> dict[str, float]:
    """perf_analyzer over gRPC at one concurrency: throughput and p99 latency (ms) over count windows of `window`
    requests (perf_analyzer's --request-count reports throughput over whole seconds, too coarse here).

    The stability bound is loose on purpose: on a shared machine tight bounds retry until they fail, and the
    rounds and medians are what steady the figures here."""
    from tritonkit.serve.perf import PerfOptions, run_perf

    opts = PerfOptions(model=model, url=url, concurrency=str(concurrency), input_data=str(input_data),
                       shapes=[f"input_ids:{SEQ_LEN}", f"attention_mask:{SEQ_LEN}"], measurement_request_count=window,
                       stability_percentage=100.0, max_trials=6)
    row = run_perf(opts).rows[-1]
    return {"throughput": float(row["throughput_infer_per_sec"]), "p99_ms": row["p99_latency_us"] / 1000.0}


@contextlib.contextmanager
def tritonkit_server(repository: Path, work: Path) -> Iterator[str]:
    """tritonkit's embedded server on the layout repository; yields its gRPC URL."""
    from tritonkit.serve.server import EmbeddedServer

    with EmbeddedServer(repository, work_dir=work / ".tritonkit", startup_timeout=300) as server:
        yield server.grpc_url


def pytriton_main(onnx_path: str, grpc_port: int, http_port: int, metrics_port: int, budget: int) -> None:
    """Child process: PyTriton serving the ONNX file with tritonkit's runner in every layout, batching as in the
    spec."""
    from pytriton.decorators import batch
    from pytriton.model_config import DynamicBatcher, ModelConfig, Tensor
    from pytriton.triton import Triton, TritonConfig, TritonSecurityConfig

    def make_infer(threads: int):
        runner = runner_for(onnx_path, threads)

        @batch
        def infer(input_ids: np.ndarray, attention_mask: np.ndarray) -> dict[str, np.ndarray]:
            return runner.run({"input_ids": input_ids, "attention_mask": attention_mask})

        return infer

    config = TritonConfig(grpc_port=grpc_port, http_port=http_port, metrics_port=metrics_port,
                          http_address="127.0.0.1", grpc_address="127.0.0.1", metrics_address="127.0.0.1")
    with Triton(config=config, security_config=TritonSecurityConfig(restricted_endpoints=[])) as triton:
        for instances, threads in layouts(budget):
            triton.bind(
                model_name=layout_name((instances, threads)),
                infer_func=[make_infer(threads) for _ in range(instances)],
                inputs=[
                    Tensor(name="input_ids", dtype=np.int64, shape=(-1,)),
                    Tensor(name="attention_mask", dtype=np.int64, shape=(-1,)),
                ],
                outputs=[Tensor(name="sentence_embedding", dtype=np.float32, shape=(-1,))],
                config=ModelConfig(
                    max_batch_size=MAX_BATCH,
                    batcher=DynamicBatcher(preferred_batch_size=[8, 16], max_queue_delay_microseconds=2000),
                ),
            )
        triton.serve()


@contextlib.contextmanager
def pytriton_server(onnx_path: Path, budget: int) -> Iterator[str]:
    """PyTriton in a child process (its own process group); yields its gRPC URL once every layout is ready."""
    import tritonclient.grpc as grpcclient

    from tritonkit.serve.ports import choose_ports
    from tritonkit.serve.runtime import prepare_runtime

    ports = choose_ports("127.0.0.1", {"http": None, "grpc": None, "metrics": None})
    # PyTriton's Python stub needs the same environment fix as tritonkit's (this interpreter's libpython first).
    child = subprocess.Popen([sys.executable, __file__, "--pytriton-child", str(onnx_path), str(ports["grpc"]),
                              str(ports["http"]), str(ports["metrics"]), str(budget)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                             env=prepare_runtime().env)
    url = f"127.0.0.1:{ports['grpc']}"
    try:
        client = grpcclient.InferenceServerClient(url)
        deadline = time.time() + 300
        while True:
            try:
                if all(client.is_model_ready(layout_name(layout)) for layout in layouts(budget)):
                    break
            except Exception:  # noqa: BLE001 - not up yet
                pass
            if child.poll() is not None or time.time() > deadline:
                raise RuntimeError("PyTriton did not become ready")
            time.sleep(1)
        client.close()
        yield url
    finally:
        stop_group(child)


def stop_group(child: subprocess.Popen) -> None:
    """SIGTERM the child's process group, SIGKILL after 30 s."""
    try:
        os.killpg(child.pid, 15)
        child.wait(timeout=30)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, 9)
        child.wait()


def median_of(results: list[dict[str, float]]) -> dict[str, float]:
    """Median throughput and p99 over rounds, plus the spread of throughput."""
    rates = [r["throughput"] for r in results]
    return {"throughput": statistics.median(rates), "p99_ms": statistics.median(r["p99_ms"] for r in results),
            "low": min(rates), "high": max(rates)}


def main() -> None:
    parser = argparse.ArgumentParser(description="Serving overhead of tritonkit's embedded Triton vs in-process and "
                                                 "PyTriton.",
                                     epilog="example: python benchmarks/serve_overhead.py --threads 2 --rounds 3")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads per side, in all")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds; figures are medians")
    parser.add_argument("--seconds", type=float, default=12.0,
                        help="in-process measuring time per round (split over batch sizes)")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="tritonkit-serve-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    built = work / "model_repository"
    if not (built / "minilm" / "1" / "model.onnx").is_file():
        build_project(work)
    onnx_path = built / "minilm" / "1" / "model.onnx"
    repository = layout_repository(built, work / "layouts", args.threads)
    input_data = perf_input_file(work / "input_data.json")
    runner = runner_for(onnx_path, args.threads)

    local: list[dict[int, float]] = []
    served: dict[tuple[str, Layout], list[dict[str, float]]] = {}
    with tritonkit_server(repository, work) as kit_url, pytriton_server(onnx_path, args.threads) as pyt_url:
        for layout in layouts(args.threads):  # warm-up: first batches load pages and thread pools
            for url in (kit_url, pyt_url):
                perf(url, layout_name(layout), input_data, args.concurrency, window=16)
        sides = [("in-process", ""), ("tritonkit", kit_url), ("PyTriton", pyt_url)]
        for round_ in range(args.rounds):
            for side, url in sides[round_ % 3:] + sides[:round_ % 3]:  # each side leads a round in turn
                if side == "in-process":
                    local.append(in_process(runner, args.seconds))
                    continue
                for layout in layouts(args.threads):
                    served.setdefault((side, layout), []).append(
                        perf(url, layout_name(layout), input_data, args.concurrency)
                    )
            print(f"round {round_ + 1}/{args.rounds}: in-process best {max(local[-1].values()):.1f} seq/s, "
                  + ", ".join(f"{side} {i}x{t} {r[-1]['throughput']:.1f}" for (side, (i, t)), r in served.items()),
                  file=sys.stderr, flush=True)

    inproc = {batch: statistics.median(r[batch] for r in local) for batch in local[0]}
    inproc_best = statistics.median(max(r.values()) for r in local)
    medians = {key: median_of(results) for key, results in served.items()}
    best = {side: max((m for (s, _), m in medians.items() if s == side), key=lambda m: m["throughput"])
            for side in ("tritonkit", "PyTriton")}

    print(f"MiniLM-L6 ONNX, sequence length {SEQ_LEN}, concurrency {args.concurrency}, {os.cpu_count()} cores; "
          f"every side {args.threads} onnxruntime threads in all; median of {args.rounds} alternating rounds")
    print(f"{'setup':<64}{'threads':>9}{'seq/s':>8}{'min-max':>13}{'p99 ms':>8}{'ratio':>7}")
    for batch, rate in inproc.items():
        spread = f"{min(r[batch] for r in local):.0f}-{max(r[batch] for r in local):.0f}"
        print(
            f"{'onnxruntime in-process, batch ' + str(batch):<64}{'1x' + str(args.threads):>9}{rate:>8.1f}{spread:>13}"
            f"{'-':>8}{rate / inproc_best:>7.2f}"
        )
    print(
        f"{'onnxruntime in-process, best batch per round':<64}{'1x' + str(args.threads):>9}{inproc_best:>8.1f}"
        f"{'':>13}{'-':>8}{1:>7.2f}"
    )
    labels = {"tritonkit": "tritonkit serve (embedded Triton, fallback runner, dyn. batch)",
              "PyTriton": "PyTriton 0.7 (same runner and batching)"}
    for (side, (i, t)), m in medians.items():
        print(f"{labels[side]:<64}{f'{i}x{t}':>9}{m['throughput']:>8.1f}{m['low']:>6.0f}-{m['high']:<6.0f}"
              f"{m['p99_ms']:>8.1f}{m['throughput'] / inproc_best:>7.2f}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print(
        json.dumps(
            {
                "served_over_inprocess": round(best["tritonkit"]["throughput"] / inproc_best, 3),
                "tritonkit_over_pytriton": round(best["tritonkit"]["throughput"] / best["PyTriton"]["throughput"], 3),
            }
        )
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--pytriton-child":
        pytriton_main(sys.argv[2], *map(int, sys.argv[3:7]))
    else:
        main()
