"""TTS pipeline: real-time factor in process vs served, and first streamed audio vs the whole utterance.

Usage: python benchmarks/tts.py [--rounds 3] [--threads N] [--keep DIR]

Builds the tts starter (`tritonkit init --pipeline tts`: Kokoro-82M int8 over tritonkit:ensembles/tts.yaml;
examples/tts/project.py) in a work folder and serves it on the embedded Triton. On one 5-sentence paragraph:
  - real-time factor (processing s / audio s), one request at a time: in process (the frontend with espeak-ng and
    Kokoro on onnxruntime through tritonkit's Synthesizer, with the intra-op threads, spinning and default voice
    read from the built `speech` config, so both sides run the same session settings) and served (the `tts`
    ensemble over gRPC: frontend and speech in their own Python-backend processes);
  - whole-utterance latency (`tts`, gRPC) and time to the first audio chunk (`tts_stream`, one response per
    sentence on a gRPC stream), with 1 and with 4 clients sending the paragraph at once.
Timed sides alternate order over --rounds rounds; each figure is the median (over rounds, and over the clients'
requests at concurrency 4). Prints the machine's load, a table, and as the LAST line
{"rtf_served_over_inprocess": x, "first_chunk_over_whole": y} (both at concurrency 1).
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import tritonclient.grpc as grpcclient
from google.protobuf import json_format

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.report import print_report  # noqa: E402
from examples.tts.client import request_inputs, stream  # noqa: E402
from examples.tts.project import write_project  # noqa: E402
from tritonkit.pipelines.tts.frontend import MAX_TOKENS, Frontend  # noqa: E402
from tritonkit.pipelines.tts.runtime import SAMPLE_RATE, KokoroModel, Synthesizer  # noqa: E402
from tritonkit.pipelines.tts.runtime.serving import MODEL_FILE, VOCAB_FILE, VOICES_FILE, parameters  # noqa: E402
from tritonkit.triton.layout import read_config  # noqa: E402

PARAGRAPH = ("Triton serves speech at 24 kilohertz. The frontend turns each sentence into phonemes. "
             "Kokoro speaks them with a voice of your choice. The first sentence streams back while the rest are "
             "spoken. So playback starts long before the paragraph is done.")
CONCURRENCY = (1, 4)


def built_parameters(model_dir: Path) -> dict[str, str]:
    """A built model's config.pbtxt parameters, read as the Python backend hands them to the model."""
    config = read_config(model_dir)
    if config is None:
        raise SystemExit(f"{model_dir}/config.pbtxt is missing or unparsable")
    return parameters(json_format.MessageToDict(config, preserving_proto_field_name=True))


def in_process(repository: Path) -> Synthesizer:
    """Frontend + Kokoro as the served `frontend` and `speech` models set them up, from their built configs."""
    speech = built_parameters(repository / "speech")
    front = built_parameters(repository / "frontend")
    folder = repository / "speech" / "1"
    model = KokoroModel(folder / MODEL_FILE, folder / VOICES_FILE,
                        intra_op_threads=int(speech.get("intra_op_thread_count", "0") or 0),
                        spin=speech.get("spin", "false").lower() == "true")
    frontend = Frontend.from_vocab(folder / VOCAB_FILE, front.get("espeak_voice", "en-us"),
                                   int(front.get("max_tokens", MAX_TOKENS)))
    return Synthesizer(frontend, model, speech.get("default_voice", "jf_alpha"))


def served_whole(url: str) -> tuple[float, np.ndarray]:
    """Seconds until the `tts` ensemble's answer to PARAGRAPH, and its audio."""
    client = grpcclient.InferenceServerClient(url)
    started = time.perf_counter()
    result = client.infer("tts", request_inputs(grpcclient, PARAGRAPH))
    seconds = time.perf_counter() - started
    client.close()
    return seconds, result.as_numpy("audio").reshape(-1)


def first_chunk(url: str) -> float:
    """Seconds until `tts_stream`'s first sentence of PARAGRAPH arrives (the stream is read to its end)."""
    return stream(url, PARAGRAPH)[0].arrived_s


def concurrently(one: Callable[[], float], clients: int) -> list[float]:
    """`clients` threads each calling `one` once, released together; their results."""
    barrier = threading.Barrier(clients)
    results: list[float] = [0.0] * clients

    def run(k: int) -> None:
        barrier.wait()
        results[k] = one()

    threads = [threading.Thread(target=run, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description="TTS benchmark: RTF in process vs served, first streamed chunk vs "
                                                 "whole utterance.",
                                     epilog="example: python benchmarks/tts.py --rounds 3")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds; figures are medians")
    parser.add_argument("--threads", type=int, default=None,
                        help="pin speech's onnxruntime intra-op threads (both sides); "
                        "default: the starter's (0, every core)")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args()
    from tritonkit.serve.server import EmbeddedServer

    load_before = os.getloadavg()
    work = args.keep or Path(tempfile.mkdtemp(prefix="tritonkit-tts-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    write_project(work, args.threads)
    subprocess.run([sys.executable, "-m", "tritonkit", "build"], cwd=work, check=True, stdout=subprocess.DEVNULL)
    repository = work / "model_repository"
    local = in_process(repository)
    threads = built_parameters(repository / "speech").get("intra_op_thread_count", "0")

    rtf_local: list[float] = []
    whole: dict[int, list[float]] = {c: [] for c in CONCURRENCY}
    first: dict[int, list[float]] = {c: [] for c in CONCURRENCY}
    with EmbeddedServer(repository, work_dir=work / ".tritonkit", startup_timeout=300) as server:
        url = server.grpc_url
        reference = local.synthesize(PARAGRAPH).audio   # also warms up both sides
        _, served_audio = served_whole(url)
        first_chunk(url)
        audio_s = reference.size / SAMPLE_RATE
        differs = (
            float(np.max(np.abs(reference - served_audio))) if reference.size == served_audio.size else float("inf")
        )

        def timed_local() -> None:
            started = time.perf_counter()
            local.synthesize(PARAGRAPH)
            rtf_local.append((time.perf_counter() - started) / audio_s)

        def timed_served(into: list[float], one: Callable[[], float], clients: int) -> Callable[[], None]:
            return lambda: into.extend(concurrently(one, clients))

        sides: list[Callable[[], None]] = [timed_local]
        for c in CONCURRENCY:
            sides += [timed_served(whole[c], lambda: served_whole(url)[0], c),
                      timed_served(first[c], lambda: first_chunk(url), c)]
        for round_ in range(args.rounds):
            for side in sides if round_ % 2 == 0 else sides[::-1]:
                side()
    load_after = os.getloadavg()

    med = {c: (statistics.median(whole[c]), statistics.median(first[c])) for c in CONCURRENCY}
    rtf_in, rtf_served = statistics.median(rtf_local), med[1][0] / audio_s
    result = {"rtf_served_over_inprocess": round(rtf_served / rtf_in, 3),
              "first_chunk_over_whole": round(med[1][1] / med[1][0], 3)}
    print(f"\nTTS benchmark: Kokoro-82M int8, a {len(local.frontend.sentences(PARAGRAPH))}-sentence paragraph "
          f"({audio_s:.1f} s of audio), speech onnxruntime intra-op threads {threads} (0: every core) on both sides, "
          f"{args.rounds} alternating rounds, medians; {os.cpu_count()} cores, load average {load_before[0]:.2f} "
          f"before, {load_after[0]:.2f} after")
    rows = [
        ("RTF in process", f"{rtf_in:.3f}",
         f"Synthesizer (frontend + Kokoro); range {min(rtf_local):.3f}-{max(rtf_local):.3f}"),
        ("RTF served (tts, gRPC)", f"{rtf_served:.3f}", f"{rtf_served / rtf_in:.2f}x in process"),
    ]
    for c in CONCURRENCY:
        rows += [(f"whole utterance, c={c}, s", f"{med[c][0]:.2f}",
                  f"tts; range {min(whole[c]):.2f}-{max(whole[c]):.2f}"),
                 (f"first chunk, c={c}, s", f"{med[c][1]:.2f}",
                  f"tts_stream; range {min(first[c]):.2f}-{max(first[c]):.2f}; {med[c][1] / med[c][0]:.2f}x the whole")]
    rows.append(("served - in process audio", f"{differs:.1e}",
                 "max |sample difference| (onnxruntime threads may change the last bits)"))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print_report(rows, result)


if __name__ == "__main__":
    main()
