"""ASR pipeline: accuracy, decoder speed, real-time factor in process vs served, streaming latency and throughput.

Usage: python benchmarks/asr.py [--threads 2] [--rounds 3] [--utterances 30] [--passes 5] [--stream-utterances 30]
[--tune-budget 8] [--retune | --tuned SPEC] [--keep DIR]

Builds the asr starter (`tritonkit init --pipeline asr`: the shipped command-word CTC model over
tritonkit:ensembles/asr.yaml; examples/asr/project.py) in a work folder, with the acoustic model's onnxruntime
intra-op threads set to --threads, and serves it on the embedded Triton. On the committed held-out WAVs (voices never
used in training) it measures, in one run:
  - WER with the WFST (TLG) decoder and with greedy CTC, on the same log-probs (in process);
  - decoder frames/s: WfstDecoder over the model's log-probs (acoustic frames per second of decoding);
  - real-time factor (processing s / audio s), utterances one after another: in process (fbank -> onnxruntime
    on the built model.onnx with tritonkit's runner and --threads threads -> WfstDecoder) and served (the `asr`
    ensemble over gRPC; its acoustic model has the same --threads threads, features and decoder run in their own
    Python-backend processes); the held-out commands last ~1.4 s, so the same is also measured on ~10 s
    recordings (consecutive held-out clips joined with 0.25 s of silence: the command grammar makes their
    transcripts meaningless, only the time counts) to separate the serving cost per request from that per second;
  - streaming (`asr_stream` over gRPC, 160 ms chunks sent as soon as the previous one is answered): latency from
    sending the last chunk to receiving the final transcript (median over utterances), and throughput in audio
    seconds per second with 1 and with 8 concurrent streams;
  - the serving floor: ensemble `floor` (added to the project by add_floor) has asr's three steps as Python models
    that compute nothing but return tensors of the real shapes, so its served time is what the hops, the ensemble
    and the gRPC client cost alone; in-process time + floor, over in-process time, is the lowest served/in-process
    ratio that any pipeline code could reach on this server;
  - throughput at 8 concurrent clients (benchmarks/asr_c8.py), audio seconds transcribed per wall second: the same
    project built a second time in its TUNED configuration (`tritonkit tune asr --joint` run here with at most
    --tune-budget configurations, instances and threads at 8 clients; the winners cached under
    .tritonkit/bench/asr/ and reused by reruns) served to 8 threads with their own gRPC clients, each sending every
    held-out clip --passes times, against 8 Python threads running the same steps in process (one onnxruntime
    session with the tuned acoustic model's session options, one WfstDecoder), and the floor ensemble at 8 clients;
    per-step Triton statistics (queue vs compute per request) say where the served time goes. Nothing is pinned:
    every side has the machine's cores, one side at a time.
Timed sides alternate over --rounds rounds; each figure is the median over rounds. Prints a table; the LAST line is
{"wer_wfst", "wer_greedy", "rtf_served", "rtf_inprocess", "stream_final_latency_ms", "streams8_over_streams1",
"floor_over_inprocess", "served_over_inprocess_10s", "floor_over_inprocess_10s", "asr_served_over_inprocess_c8",
"floor_over_inprocess_c8"} (floor_over_inprocess: that lowest reachable ratio on the commands; then served RTF over
in-process RTF and the lowest reachable ratio on ~10 s audio; then the tuned served audio throughput at 8 clients over
the in-process one at 8 threads, and the ratio served would reach if serving added only the floor's cost to the
in-process work: F / (I + F) for floor and in-process throughputs F and I; an estimate that assumes both sides keep
the cores busy, not a bound: a side that leaves cores idle (threads waiting on the GIL, a floor step's one instance)
breaks it).
"""

from __future__ import annotations

import argparse
import copy
import itertools
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tritonclient.grpc as grpcclient
import yaml
from google.protobuf import json_format

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.asr_c8 import (  # noqa: E402
    CLIENTS,
    STEPS,
    Search,
    read_overlay,
    step_statistics,
    throughput,
    tuned_build,
    where_time_goes,
)
from benchmarks.report import print_report  # noqa: E402
from examples.asr.client import CHUNK_MS  # noqa: E402
from examples.asr.heldout import read_heldout, read_wav, word_error_rate  # noqa: E402
from examples.asr.project import write_project  # noqa: E402
from tritonkit.pipelines.asr.commands_ctc.model import greedy_decode  # noqa: E402
from tritonkit.pipelines.asr.runtime.decoder import Graph, WfstDecoder  # noqa: E402
from tritonkit.pipelines.asr.runtime.features import compute_fbank  # noqa: E402
from tritonkit.pipelines.asr.runtime.serving import decoder_config, parameters  # noqa: E402
from tritonkit.serve.onnx_runner import OnnxRunner, instance_count, options_from_config  # noqa: E402
from tritonkit.triton.layout import read_config  # noqa: E402

STREAM_RATE = 16000   # the held-out clips' rate, streamed without SAMPLE_RATE (asr_stream's default)
CHUNK = STREAM_RATE * CHUNK_MS // 1000


@dataclass(frozen=True)
class Clip:
    pcm: np.ndarray
    rate: int
    words: list[str]

    @property
    def seconds(self) -> float:
        return self.pcm.size / self.rate


def add_floor(root: Path) -> None:
    """Adds the serving floor to the project's spec: ensemble `floor`, asr's ensemble with each of its three steps
    replaced by a Python model of the same inputs and outputs that computes nothing but returns tensors of the real
    step's shapes (benchmarks/asr_floor_model.py).

    Its served time per request is what the hops, the ensemble and the client cost with the same tensors, so
    (in-process time + floor) / in-process time is the lowest served/in-process ratio any code could reach here."""
    spec_path = root / "tritonkit.yaml"
    spec = yaml.safe_load(spec_path.read_text())
    pipeline = yaml.safe_load((REPO_ROOT / "ensembles" / "asr.yaml").read_text())["models"]
    real = {**pipeline, "acoustic": spec["models"]["acoustic"]}
    shutil.copy(Path(__file__).with_name("asr_floor_model.py"), root / "floor_model.py")
    for step in ("features", "acoustic", "decoder"):
        spec["models"][f"floor_{step}"] = {
            "backend": "python", "max_batch_size": 8, "input": real[step]["input"], "output": real[step]["output"],
            "dynamic_batching": {}, "instance_group": [{"kind": "KIND_CPU", "count": 1}],
            "parameters": {"step": step}, "files": {"model.py": "floor_model.py"}, "requirements": ["numpy"]}
    ensemble = copy.deepcopy(pipeline["asr"])
    for step in ensemble["ensemble_scheduling"]["step"]:
        step["model_name"] = f"floor_{step['model_name']}"
    spec["models"]["floor"] = ensemble
    spec_path.write_text(yaml.safe_dump(spec, sort_keys=False))


def write_spec(root: Path, threads: int) -> Path:
    """The example project with the acoustic model's thread count pinned and the serving floor added; returns its
    spec."""
    spec = write_project(root, threads)
    add_floor(root)
    return spec


def build_project(root: Path, threads: int) -> Path:
    """`write_spec`'s project built; returns the repository."""
    write_spec(root, threads)
    subprocess.run([sys.executable, "-m", "tritonkit", "build"], cwd=root, check=True, stdout=subprocess.DEVNULL)
    return root / "model_repository"


def built_config(model_dir: Path) -> dict:
    """A built model's config.pbtxt in the JSON form the Python backend hands its model."""
    config = read_config(model_dir)
    if config is None:
        raise SystemExit(f"{model_dir}/config.pbtxt is missing or unparsable")
    return json_format.MessageToDict(config, preserving_proto_field_name=True)


class InProcess:
    """The served pipeline's steps in this process: fbank -> onnxruntime (tritonkit's runner) -> WfstDecoder.

    Session options and decoder settings come from the built acoustic and decoder configs, as in the served models.
    """

    def __init__(self, repository: Path) -> None:
        folder = repository / "acoustic" / "1"
        self.runner = OnnxRunner(folder / "model.onnx", ["LOG_PROBS"], batched=True,
                                 options=options_from_config(built_config(repository / "acoustic")))
        self.decoder = WfstDecoder(Graph.load(folder), decoder_config(parameters(built_config(repository / "decoder"))))

    def log_probs(self, clip: Clip) -> np.ndarray:
        return self.runner.run({"FEATURES": compute_fbank(clip.pcm, clip.rate)[None]})["LOG_PROBS"][0]

    def transcribe(self, clip: Clip) -> str:
        return self.decoder.decode(self.log_probs(clip)).text


def served_transcribe(client: grpcclient.InferenceServerClient, clip: Clip, model: str = "asr") -> str:
    inputs = [grpcclient.InferInput("PCM", [1, clip.pcm.size], "FP32"),
              grpcclient.InferInput("SAMPLE_RATE", [1, 1], "INT32")]
    inputs[0].set_data_from_numpy(clip.pcm[None].astype(np.float32))
    inputs[1].set_data_from_numpy(np.array([[clip.rate]], np.int32))
    return client.infer(model, inputs).as_numpy("TRANSCRIPT")[0, 0].decode()


def joined(clips: list[Clip], seconds: float) -> list[Clip]:
    """Consecutive clips joined, with 0.25 s of silence between them, into recordings of at least `seconds`."""
    out: list[Clip] = []
    parts: list[np.ndarray] = []
    for clip in clips:
        parts += [clip.pcm, np.zeros(clip.rate // 4, np.float32)]
        if sum(p.size for p in parts) >= seconds * clip.rate:
            out.append(Clip(np.concatenate(parts), clip.rate, []))
            parts = []
    return out


def rtf(transcribe, clips: list[Clip], passes: int) -> float:
    """Processing seconds over audio seconds, utterances one after another, `passes` times over the set."""
    started = time.perf_counter()
    for clip in clips * passes:
        transcribe(clip)
    return (time.perf_counter() - started) / (passes * sum(c.seconds for c in clips))


class Streamer:
    """Streams clips to `asr_stream` in 160 ms chunks, each sent when the previous one is answered."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._ids = itertools.count(2**40)   # unique uint64 sequence ids above 2^32
        self._lock = threading.Lock()

    def stream(self, client: grpcclient.InferenceServerClient, clip: Clip) -> tuple[str, float]:
        """The final transcript and the seconds from sending the last chunk to receiving it."""
        with self._lock:
            sequence_id = next(self._ids)
        pieces = [clip.pcm[i:i + CHUNK] for i in range(0, clip.pcm.size, CHUNK)]
        for k, piece in enumerate(pieces):
            inputs = [grpcclient.InferInput("PCM", [1, piece.size], "FP32")]
            inputs[0].set_data_from_numpy(piece[None].astype(np.float32))
            sent = time.perf_counter()
            result = client.infer("asr_stream", inputs, sequence_id=sequence_id, sequence_start=k == 0,
                                  sequence_end=k == len(pieces) - 1)
        return result.as_numpy("TRANSCRIPT")[0, 0].decode(), time.perf_counter() - sent

    def throughput(self, clips: list[Clip], streams: int) -> float:
        """Audio seconds per second with `streams` concurrent streams, each streaming every clip (offset starts)."""
        def run(k: int) -> None:
            client = grpcclient.InferenceServerClient(self.url)
            for clip in clips[k:] + clips[:k]:
                self.stream(client, clip)

        threads = [threading.Thread(target=run, args=(k,)) for k in range(streams)]
        started = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return streams * sum(c.seconds for c in clips) / (time.perf_counter() - started)


def compare_c8(work: Path, clips: list[Clip], args: argparse.Namespace) -> tuple[dict, list[tuple[str, str, str]], int]:
    """Tuned served `asr`, in process and `floor` at 8 clients, alternating over rounds: the JSON keys, the table
    rows and how many served transcripts differ from the in-process ones."""
    from tritonkit.serve.server import EmbeddedServer

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    folder = work / "tuned"
    repository, source = tuned_build(write_spec(folder, args.threads), Search(args.tune_budget), args.tuned,
                                     args.retune, say)
    local = InProcess(repository)
    configs = {step: built_config(repository / step) for step in STEPS}
    sides = ["in-process", "served", "floor"]
    rates: dict[str, list[float]] = {side: [] for side in sides}
    with EmbeddedServer(repository, work_dir=folder / ".tritonkit", startup_timeout=300) as server:
        clients = [grpcclient.InferenceServerClient(server.grpc_url) for _ in range(CLIENTS)]
        mismatched = sum(served_transcribe(clients[0], c) != local.transcribe(c) for c in clips)   # also warms up
        for clip in clips:
            served_transcribe(clients[0], clip, "floor")
        before = step_statistics(clients[0])
        for round_ in range(args.rounds):
            for side in (sides if round_ % 2 == 0 else sides[::-1]):
                def transcribe(k: int, clip: Clip, side: str = side) -> str:
                    if side == "in-process":
                        return local.transcribe(clip)
                    return served_transcribe(clients[k], clip, "asr" if side == "served" else "floor")

                rates[side].append(throughput(transcribe, clips, args.passes))
                say(f"[c={CLIENTS} round {round_ + 1}/{args.rounds}] {side}: {rates[side][-1]:.1f} audio s/s")
        after = step_statistics(clients[0])
    med = {side: statistics.median(values) for side, values in rates.items()}
    result = {"asr_served_over_inprocess_c8": round(med["served"] / med["in-process"], 3),
              "floor_over_inprocess_c8": round(med["floor"] / (med["in-process"] + med["floor"]), 3)}
    settings = ", ".join(f"{step} {instance_count(configs[step])}" for step in STEPS)
    threads = options_from_config(configs["acoustic"]).intra_op_threads
    rows = [
        (f"audio s/s, {CLIENTS} threads in process", f"{med['in-process']:.1f}",
         f"one onnxruntime session ({threads} intra-op threads) and one WfstDecoder; {args.passes} passes/round"),
        (f"audio s/s, {CLIENTS} clients served", f"{med['served']:.1f}",
         f"asr tuned (instances: {settings}; acoustic {threads} threads), "
         f"{result['asr_served_over_inprocess_c8']:.2f}x in process"),
        ("  tuned settings", "", source),
        *where_time_goes(before, after, {step: instance_count(configs[step]) for step in STEPS}),
        (f"audio s/s, {CLIENTS} clients floor", f"{med['floor']:.1f}",
         f"floor ensemble (1 instance a step); in process + the floor's cost = "
         f"{result['floor_over_inprocess_c8']:.2f}x in process (estimate: both sides CPU-bound)"),
    ]
    return result, rows, mismatched


def main() -> None:
    parser = argparse.ArgumentParser(description="ASR pipeline benchmark: WER, decoder speed, RTF in process vs "
                                                 "served, streaming.",
                                     epilog="example: python benchmarks/asr.py --threads 2 --rounds 3")
    parser.add_argument("--threads", type=int, default=2,
                        help="onnxruntime intra-op threads of the acoustic model, both sides")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds; figures are medians")
    parser.add_argument("--utterances", type=int, default=30, help="held-out utterances to use (30 committed)")
    parser.add_argument("--passes", type=int, default=5, help="passes over the utterances per RTF measurement")
    parser.add_argument("--stream-utterances", type=int, default=30,
                        help="utterances each stream sends per throughput measurement")
    parser.add_argument("--tune-budget", type=int, default=Search.budget,
                        help="configurations `tune asr --joint` measures for the c=8 comparison (cached by settings)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--retune", action="store_true", help="search again instead of reusing the cached winners")
    which.add_argument("--tuned", type=Path, metavar="SPEC",
                       help="take the tuned: block of this spec (written by tritonkit tune asr --joint) instead")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args()
    from tritonkit.serve.server import EmbeddedServer

    if args.tuned:
        read_overlay(args.tuned)   # a bad file fails now, not after the other measurements
    clips = [Clip(*read_wav(u.path), u.words) for u in read_heldout()[:args.utterances]]
    if any(c.rate != STREAM_RATE for c in clips):
        raise SystemExit(f"held-out clips must be {STREAM_RATE} Hz for streaming")
    work = args.keep or Path(tempfile.mkdtemp(prefix="tritonkit-asr-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    repository = build_project(work, args.threads)
    local = InProcess(repository)

    # accuracy and decoder speed, in process (log-probs computed once, both decoders on the same ones)
    log_probs = [local.log_probs(c) for c in clips]
    refs = [c.words for c in clips]
    wfst_hyps = [local.decoder.decode(lp).text.split() for lp in log_probs]
    greedy_hyps = [greedy_decode(lp) for lp in log_probs]
    decode_rates = []
    for _ in range(args.rounds):
        started = time.perf_counter()
        for lp in log_probs:
            local.decoder.decode(lp)
        decode_rates.append(sum(lp.shape[0] for lp in log_probs) / (time.perf_counter() - started))

    long_clips = joined(clips, 10.0)
    sides = ["in-process", "served", "floor"]
    rtfs: dict[str, list[float]] = {side: [] for side in sides}   # on the held-out commands
    rtf_long: dict[str, list[float]] = {side: [] for side in sides}   # on the ~10 s recordings
    latencies: list[float] = []
    tput: dict[int, list[float]] = {1: [], 8: []}
    with EmbeddedServer(repository, work_dir=work / ".tritonkit", startup_timeout=300) as server:
        client = grpcclient.InferenceServerClient(server.grpc_url)
        streamer = Streamer(server.grpc_url)
        mismatched = [
            i for i, c in enumerate(clips) if served_transcribe(client, c) != local.transcribe(c)
        ]  # also warms up
        for clip in clips:
            served_transcribe(client, clip, "floor")   # warm-up
        streamed = [streamer.stream(client, c) for c in clips]
        mismatched += [i for i, c in enumerate(clips) if streamed[i][0] != local.transcribe(c)]
        stream_set = clips[:args.stream_utterances]
        for round_ in range(args.rounds):
            for side in (sides if round_ % 2 == 0 else sides[::-1]):
                transcribe = local.transcribe if side == "in-process" else (
                    lambda c, model="asr" if side == "served" else "floor": served_transcribe(client, c, model))
                rtfs[side].append(rtf(transcribe, clips, args.passes))
                rtf_long[side].append(rtf(transcribe, long_clips, args.passes))
            latencies.append(statistics.median(streamer.stream(client, c)[1] for c in clips) * 1000)
            for streams in ([1, 8] if round_ % 2 == 0 else [8, 1]):
                tput[streams].append(streamer.throughput(stream_set, streams))

    c8, c8_rows, c8_mismatched = compare_c8(work, clips, args)
    result = {
        "wer_wfst": round(word_error_rate(refs, wfst_hyps), 4),
        "wer_greedy": round(word_error_rate(refs, greedy_hyps), 4),
        "rtf_served": round(statistics.median(rtfs["served"]), 4),
        "rtf_inprocess": round(statistics.median(rtfs["in-process"]), 4),
        "stream_final_latency_ms": round(statistics.median(latencies), 1),
        "streams8_over_streams1": round(statistics.median(tput[8]) / statistics.median(tput[1]), 2),
    }
    audio = sum(c.seconds for c in clips)
    short = {side: statistics.median(values) for side, values in rtfs.items()}
    long = {side: statistics.median(values) for side, values in rtf_long.items()}
    # the floor's time added to the in-process time: the served RTF of a pipeline whose serving cost nothing more
    result["floor_over_inprocess"] = round((short["in-process"] + short["floor"]) / short["in-process"], 2)
    result["served_over_inprocess_10s"] = round(long["served"] / long["in-process"], 2)
    result["floor_over_inprocess_10s"] = round((long["in-process"] + long["floor"]) / long["in-process"], 2)
    result.update(c8)
    per_request = {side: 1000 * value * audio / len(clips) for side, value in short.items()}
    long_audio = sum(c.seconds for c in long_clips) / len(long_clips)
    print(f"\nASR benchmark: {len(clips)} held-out utterances ({audio:.1f} s audio, voices never used in training), "
          f"acoustic onnxruntime {args.threads} intra-op threads on both sides, {args.rounds} alternating rounds, "
          "medians")
    rows = [
        ("WER, WFST (TLG) decoder", f"{100 * result['wer_wfst']:.2f} %", f"{sum(len(r) for r in refs)} words"),
        ("WER, greedy CTC", f"{100 * result['wer_greedy']:.2f} %", "same log-probs"),
        ("decoder frames/s", f"{statistics.median(decode_rates):,.0f}",
         f"WfstDecoder, {sum(lp.shape[0] for lp in log_probs)} acoustic frames"),
        ("RTF in process", f"{short['in-process']:.4f}",
         f"{per_request['in-process']:.2f} ms per {1000 * audio / len(clips):.0f} ms utterance; {args.passes} "
         "passes/round"),
        ("RTF served (asr, gRPC)", f"{short['served']:.4f}",
         f"{per_request['served']:.2f} ms; {short['served'] / short['in-process']:.2f}x in process"),
        ("serving floor (floor, gRPC)", f"{short['floor']:.4f}",
         f"{per_request['floor']:.2f} ms: asr's hops and tensors, no work; in process + floor = "
         f"{result['floor_over_inprocess']:.2f}x in process, the least served can be"),
        ("RTF in process, ~10 s audio", f"{long['in-process']:.4f}",
         f"{len(long_clips)} recordings of joined clips, {long_audio:.1f} s each"),
        ("RTF served, ~10 s audio", f"{long['served']:.4f}", f"{result['served_over_inprocess_10s']:.2f}x in process"),
        ("serving floor, ~10 s audio", f"{long['floor']:.4f}",
         f"{1000 * long['floor'] * long_audio:.2f} ms; in process + floor = {result['floor_over_inprocess_10s']:.2f}x "
         "in process"),
        ("stream last chunk -> final, ms", f"{result['stream_final_latency_ms']:.1f}",
         "asr_stream, 160 ms chunks, median over utterances"),
        ("stream throughput, 1 stream", f"{statistics.median(tput[1]):.1f} audio s/s",
         f"{len(stream_set)} utterances per stream"),
        ("stream throughput, 8 streams", f"{statistics.median(tput[8]):.1f} audio s/s",
         f"{result['streams8_over_streams1']:.2f}x 1 stream"),
        *c8_rows,
        ("served/streamed != in process", f"{len(mismatched) + c8_mismatched}",
         "transcripts that differ (should be 0)"),
    ]
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print_report(rows, result)


if __name__ == "__main__":
    main()
