"""Embeddings: sentences/s served (through the gateway's /v1/embeddings and straight to Triton over gRPC) over
sentence-transformers in process, 8 requests at once.

Usage: python benchmarks/embeddings.py [--rounds 5] [--repeat 2] [--keep DIR]

Builds the embed starter (`tritonkit init --pipeline embed`: all-MiniLM-L6-v2, tokenize -> encode in the `embed`
ensemble) in a work folder (default .tritonkit/bench/embed, the export cached there), serves it on the embedded
Triton and starts `tritonkit gateway` in front of it. The workload is the 100 sentences of tests/embed/sentences.txt
(short and long, two past the model's 256-token limit), --repeat times, one sentence a request, sent by 8 client
threads at once:
  - served: the official `openai` client's embeddings.create (its default base64 vectors) to /v1/embeddings;
  - triton: tritonclient's gRPC infer on the `embed` ensemble (text in, embedding out), one channel a thread;
  - in process: SentenceTransformer(model).encode on the same sentences 8 at a time (each group of 8 requests
    one batched call, as one process holding them would run them), with torch's threads set to the number the
    Triton side's encoder runs with (its intra_op_thread_count; 0 means every core over its instances), and idle
    OpenMP threads sleeping (OMP_WAIT_POLICY=PASSIVE unless set) as the served onnxruntime's do (allow_spinning 0):
    with OpenMP's default spin, 2 torch threads on a busy shared machine ran 7x slower than 1.
Each round runs the three sides back to back, their order rotating round by round, after a warm-up of each; figures
are medians over rounds of sentences/s (all sentences of the run over its wall time). Prints the machine's load, a
table, then the JSON object as the LAST line: {"embeddings_served_over_inprocess_c8" (aim >= 1.0),
"embeddings_triton_over_inprocess_c8", "served_sentences_s_c8", "triton_sentences_s_c8",
"inprocess_sentences_s_c8", "threads", "rounds", "sentences", "cpu"}.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")   # read once, when torch starts OpenMP (imported below)

from benchmarks.report import cpu_model, print_report  # noqa: E402
from tests.gateway.conftest import gateway  # noqa: E402  (runs `tritonkit gateway` as a user does)
from tritonkit.pipelines.embed.export.encoder import model_dir  # noqa: E402

CONCURRENCY = 8
SENTENCES = (REPO_ROOT / "tests" / "embed" / "sentences.txt").read_text(encoding="utf-8").splitlines()


def build(work: Path) -> Path:
    """The embed starter initialized (once) and built in WORK; its repository."""
    if not (work / "tritonkit.yaml").exists():
        subprocess.run([sys.executable, "-m", "tritonkit", "init", str(work), "--pipeline", "embed"], check=True,
                       stdout=subprocess.DEVNULL)
    subprocess.run([sys.executable, "-m", "tritonkit", "build"], cwd=work, check=True, stdout=subprocess.DEVNULL)
    return work / "model_repository"


def encoder_threads(repository: Path) -> int:
    """onnxruntime's intra-op threads in one `encode` instance, as the served model computes them."""
    from google.protobuf import json_format

    from tritonkit.serve.onnx_runner import options_from_config
    from tritonkit.triton.layout import read_config

    config = json_format.MessageToDict(read_config(repository / "encode"), preserving_proto_field_name=True)
    return options_from_config(config).intra_op_threads


def concurrently(one: Callable[[str], object], sentences: list[str]) -> float:
    """Sentences/s of `one` over SENTENCES, CONCURRENCY at a time."""
    started = time.perf_counter()
    with ThreadPoolExecutor(CONCURRENCY) as pool:
        list(pool.map(one, sentences))
    return len(sentences) / (time.perf_counter() - started)


def in_process(model, sentences: list[str]) -> float:  # type: ignore[no-untyped-def]
    """Sentences/s of the model encoding SENTENCES in groups of CONCURRENCY."""
    started = time.perf_counter()
    for i in range(0, len(sentences), CONCURRENCY):
        model.encode(sentences[i:i + CONCURRENCY], batch_size=CONCURRENCY)
    return len(sentences) / (time.perf_counter() - started)


def triton_side(url: str) -> Callable[[str], object]:
    """One gRPC client per thread, each request the `embed` ensemble on one sentence."""
    import threading

    import tritonclient.grpc as grpcclient

    local = threading.local()

    def one(sentence: str) -> object:
        if not hasattr(local, "client"):
            local.client = grpcclient.InferenceServerClient(url)
        text = grpcclient.InferInput("text", [1, 1], "BYTES")
        text.set_data_from_numpy(np.array([[sentence.encode()]], dtype=np.object_))
        return local.client.infer("embed", [text]).as_numpy("embedding")

    return one


def measure(work: Path, rounds: int, repeat: int) -> dict[str, object]:
    import openai
    import torch
    from sentence_transformers import SentenceTransformer

    from tritonkit.serve.server import EmbeddedServer

    repository = build(work)
    threads = encoder_threads(repository)
    torch.set_num_threads(threads)
    model = SentenceTransformer(model_dir(), device="cpu")
    sentences = SENTENCES * repeat
    speeds: dict[str, list[float]] = {"served": [], "triton": [], "inprocess": []}
    with EmbeddedServer(repository, work_dir=work / ".tritonkit", startup_timeout=300) as server, \
            gateway(work, server) as base:
        client = openai.OpenAI(base_url=base, api_key="unused", max_retries=0, timeout=300)
        sides: dict[str, Callable[[], float]] = {
            "served": lambda: concurrently(lambda s: client.embeddings.create(model="embed", input=s), sentences),
            "triton": lambda: concurrently(triton_side(server.grpc_url), sentences),
            "inprocess": lambda: in_process(model, sentences),
        }
        for side in sides.values():   # warm-up: sessions, pools and connections
            side()
        names = list(sides)
        for r in range(rounds):
            for name in names[r % 3:] + names[:r % 3]:
                speeds[name].append(sides[name]())
    return {"median": {k: statistics.median(v) for k, v in speeds.items()}, "speeds": speeds, "threads": threads}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=2, help="times the 100 sentences are sent a round")
    parser.add_argument("--keep", type=Path, default=REPO_ROOT / ".tritonkit" / "bench" / "embed",
                        help="work folder (the built starter, kept for the next run)")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    measured = measure(args.keep, args.rounds, args.repeat)
    median, speeds, cpu = measured["median"], measured["speeds"], cpu_model()
    assert isinstance(median, dict) and isinstance(speeds, dict)
    served, triton, local = median["served"], median["triton"], median["inprocess"]
    print(f"\nembeddings: all-MiniLM-L6-v2, {len(SENTENCES) * args.repeat} sentences a round, c={CONCURRENCY}, "
          f"{args.rounds} rotating rounds, medians; {os.cpu_count()} cores, load average {load_before:.2f} before, "
          f"{os.getloadavg()[0]:.2f} after")

    def span(name: str) -> str:
        return f"range {min(speeds[name]):.1f}-{max(speeds[name]):.1f}"

    rows = [("cpu", cpu, "lscpu"),
            ("in process sentences/s", f"{local:.1f}", f"SentenceTransformer.encode, 8 a call, torch threads "
                                                       f"{measured['threads']}, OMP_WAIT_POLICY "
                                                       f"{os.environ['OMP_WAIT_POLICY']}; {span('inprocess')}"),
            ("served sentences/s", f"{served:.1f}", f"openai client -> /v1/embeddings; {span('served')}"),
            ("triton sentences/s", f"{triton:.1f}", f"tritonclient gRPC -> embed; {span('triton')}"),
            ("served / in process", f"{served / local:.2f}", "aim >= 1.0"),
            ("triton / in process", f"{triton / local:.2f}", "")]
    result = {"embeddings_served_over_inprocess_c8": round(served / local, 3),
              "embeddings_triton_over_inprocess_c8": round(triton / local, 3),
              "served_sentences_s_c8": round(served, 1), "triton_sentences_s_c8": round(triton, 1),
              "inprocess_sentences_s_c8": round(local, 1), "threads": measured["threads"], "rounds": args.rounds,
              "sentences": len(SENTENCES) * args.repeat, "cpu": cpu}
    print_report(rows, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
