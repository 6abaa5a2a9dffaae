"""Serving overhead: MiniLM (ONNX, sequence length 128) in-process vs tritonkit's embedded Triton vs PyTriton.

Usage: python benchmarks/serve_overhead.py [--concurrency 8] [--seconds 20] [--keep DIR]

One run measures, side by side on this machine:
  1. in-process onnxruntime, 2 intra-op threads, best of batch sizes 1/8/16 (the limit);
  2. `tritonkit build` + `tritonkit serve` (embedded Triton 2.51, dynamic batching [8, 16] with 2 ms delay,
     2 CPU instances x 1 thread; the ONNX model runs through tritonkit's Python-backend fallback);
  3. PyTriton 0.7 serving the same ONNX file with the same runner code and the same batching settings,
     in tritonkit's instance layout and in 1 instance x 2 threads (the ratio takes PyTriton's best).
Served throughput comes from perf_analyzer (gRPC, concurrency N, identical tokenized input data).
Prints a table; the LAST line is {"served_over_inprocess": x, "tritonkit_over_pytriton": y}.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
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
    export: {{dynamic_axes: {{input_ids: {{1: seq}}, attention_mask: {{1: seq}}}}, verify: {{lengths: {{seq: [16]}}, golden_samples: 1}}}}
    max_batch_size: {MAX_BATCH}
    dynamic_batching: {{preferred_batch_size: [8, 16], max_queue_delay_microseconds: 2000}}
    instance_group: [{{kind: KIND_CPU, count: 2}}]
"""


def tokens(count: int = 16) -> dict[str, np.ndarray]:
    """Real token ids of varied sentences, padded to SEQ_LEN (batch of `count`)."""
    from examples.models.minilm import SENTENCES, tokenize

    sentences = [f"{SENTENCES[i % len(SENTENCES)]} ({i})" for i in range(count)]
    return {k: v.numpy() for k, v in tokenize(sentences, SEQ_LEN).items()}


def perf_input_file(path: Path) -> Path:
    """perf_analyzer --input-data JSON with the same token rows the in-process run uses."""
    data = tokens()
    rows = [{name: {"content": data[name][i].tolist(), "shape": [SEQ_LEN]} for name in data} for i in range(len(data["input_ids"]))]
    path.write_text(json.dumps({"data": rows}))
    return path


def build_project(root: Path) -> Path:
    """Exports MiniLM with `tritonkit build`; returns the built repository."""
    shutil.copytree(REPO_ROOT / "examples", root / "examples", ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
    (root / "tritonkit.yaml").write_text(SPEC)
    subprocess.run([sys.executable, "-m", "tritonkit", "build"], cwd=root, check=True)
    return root / "model_repository"


def in_process(onnx_path: Path, seconds: float) -> dict[int, float]:
    """Sequences/s per batch size with the same runner the served model uses."""
    from tritonkit.serve.onnx_runner import OnnxRunner, RunnerOptions

    runner = OnnxRunner(onnx_path, ["sentence_embedding"], batched=True, options=RunnerOptions(intra_op_threads=2))
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


def perf(url: str, input_data: Path, concurrency: int) -> dict[str, float]:
    """perf_analyzer over gRPC at one concurrency: throughput and p99 latency (ms)."""
    from tritonkit.serve.perf import PerfOptions, run_perf

    opts = PerfOptions(model="minilm", url=url, concurrency=str(concurrency), input_data=str(input_data),
                       shapes=[f"input_ids:{SEQ_LEN}", f"attention_mask:{SEQ_LEN}"], measurement_request_count=160,
                       stability_percentage=25.0)
    row = run_perf(opts).rows[-1]
    return {"throughput": float(row["throughput_infer_per_sec"]), "p99_ms": row["p99_latency_us"] / 1000.0}


def serve_tritonkit(repository: Path, work: Path, input_data: Path, concurrency: int) -> dict[str, float]:
    from tritonkit.serve.server import EmbeddedServer

    with EmbeddedServer(repository, work_dir=work / ".tritonkit") as server:
        return perf(server.grpc_url, input_data, concurrency)


def pytriton_main(onnx_path: str, grpc_port: int, http_port: int, metrics_port: int, instances: int, threads: int) -> None:
    """Child process: PyTriton serving the ONNX file with tritonkit's runner, batching as in the spec."""
    from pytriton.decorators import batch
    from pytriton.model_config import DynamicBatcher, ModelConfig, Tensor
    from pytriton.triton import Triton, TritonConfig, TritonSecurityConfig

    from tritonkit.serve.onnx_runner import OnnxRunner, RunnerOptions

    def make_infer():
        runner = OnnxRunner(onnx_path, ["sentence_embedding"], batched=True, options=RunnerOptions(intra_op_threads=threads))

        @batch
        def infer(input_ids: np.ndarray, attention_mask: np.ndarray) -> dict[str, np.ndarray]:
            return runner.run({"input_ids": input_ids, "attention_mask": attention_mask})

        return infer

    config = TritonConfig(grpc_port=grpc_port, http_port=http_port, metrics_port=metrics_port,
                          http_address="127.0.0.1", grpc_address="127.0.0.1", metrics_address="127.0.0.1")
    with Triton(config=config, security_config=TritonSecurityConfig(restricted_endpoints=[])) as triton:
        triton.bind(
            model_name="minilm", infer_func=[make_infer() for _ in range(instances)],
            inputs=[Tensor(name="input_ids", dtype=np.int64, shape=(-1,)), Tensor(name="attention_mask", dtype=np.int64, shape=(-1,))],
            outputs=[Tensor(name="sentence_embedding", dtype=np.float32, shape=(-1,))],
            config=ModelConfig(max_batch_size=MAX_BATCH, batcher=DynamicBatcher(preferred_batch_size=[8, 16], max_queue_delay_microseconds=2000)),
        )
        triton.serve()


def serve_pytriton(onnx_path: Path, input_data: Path, concurrency: int, instances: int, threads: int) -> dict[str, float]:
    import tritonclient.grpc as grpcclient

    from tritonkit.serve.ports import choose_ports
    from tritonkit.serve.runtime import prepare_runtime

    ports = choose_ports("127.0.0.1", {"http": None, "grpc": None, "metrics": None})
    # PyTriton's Python stub needs the same environment fix as tritonkit's (this interpreter's libpython first).
    child = subprocess.Popen([sys.executable, __file__, "--pytriton-child", str(onnx_path), str(ports["grpc"]), str(ports["http"]), str(ports["metrics"]), str(instances), str(threads)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=prepare_runtime().env)
    url = f"127.0.0.1:{ports['grpc']}"
    try:
        client = grpcclient.InferenceServerClient(url)
        deadline = time.time() + 180
        while True:
            try:
                if client.is_model_ready("minilm"):
                    break
            except Exception:  # noqa: BLE001 - not up yet
                pass
            if child.poll() is not None or time.time() > deadline:
                raise RuntimeError("PyTriton did not become ready")
            time.sleep(1)
        client.close()
        return perf(url, input_data, concurrency)
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


def main() -> None:
    parser = argparse.ArgumentParser(description="Serving overhead of tritonkit's embedded Triton vs in-process and PyTriton.")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20.0, help="in-process measuring time (split over batch sizes)")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="tritonkit-serve-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    repository = build_project(work)
    onnx_path = repository / "minilm" / "1" / "model.onnx"
    input_data = perf_input_file(work / "input_data.json")

    local = in_process(onnx_path, args.seconds)
    best_batch = max(local, key=local.get)
    kit = serve_tritonkit(repository, work, input_data, args.concurrency)
    # PyTriton gets the same layout as tritonkit (2 instances x 1 thread) and its own better one (1 x 2 threads);
    # the ratio uses PyTriton's best.
    pytriton = {layout: serve_pytriton(onnx_path, input_data, args.concurrency, *layout) for layout in ((2, 1), (1, 2))}
    pyt = max(pytriton.values(), key=lambda r: r["throughput"])

    print(f"MiniLM-L6 ONNX, sequence length {SEQ_LEN}, concurrency {args.concurrency}, {os.cpu_count()} cores")
    print(f"{'setup':<66}{'seq/s':>8}{'p99 ms':>9}{'ratio':>7}")
    for batch, rate in local.items():
        print(f"{'onnxruntime in-process, batch ' + str(batch):<66}{rate:>8.1f}{'-':>9}{rate / local[best_batch]:>7.2f}")
    rows = [("tritonkit serve (embedded Triton, dyn. batching, 2 inst x 1 thr)", kit)]
    rows += [(f"PyTriton 0.7 (same runner and batching, {i} inst x {t} thr)", r) for (i, t), r in pytriton.items()]
    for label, result in rows:
        print(f"{label:<66}{result['throughput']:>8.1f}{result['p99_ms']:>9.1f}{result['throughput'] / local[best_batch]:>7.2f}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({"served_over_inprocess": round(kit["throughput"] / local[best_batch], 3),
                      "tritonkit_over_pytriton": round(kit["throughput"] / pyt["throughput"], 3)}))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--pytriton-child":
        pytriton_main(sys.argv[2], *map(int, sys.argv[3:8]))
    else:
        main()
