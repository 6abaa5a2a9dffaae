"""Synthesize text with a served TTS pipeline: whole over HTTP (`tts`), then streamed over gRPC (`tts_stream`).

The two ways a client talks to the pipeline of tritonkit:ensembles/tts.yaml:
- whole: one request to the `tts` ensemble with `text` ([1, 1] BYTES) and optionally `voice` ([1, 1] BYTES) and
  `speed` ([1, 1] FP32); the answer is `audio` (float32 PCM [1, samples]), `sample_rate` and `unknown_symbols`
  (JSON {symbol: count} of phonemes the model's table lacks, {} when none).
- streaming: the same request to `tts_stream` on a gRPC stream; one response per sentence (audio, sample_rate,
  unknown_symbols, sentence), each sent as soon as it is spoken; the final flag ends it.
Both are written as mono 16-bit WAV files: whole.wav and streamed.wav (the sentences joined).

Example (the tts starter, `tritonkit init --pipeline tts`, served on the default ports; from the repository root):
    python -m examples.tts.client "Triton serves speech at 24 kilohertz. It streams." --out-dir /tmp/tts --url
    127.0.0.1:8000 --grpc-url 127.0.0.1:8001
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from examples.asr.heldout import write_wav


@dataclass
class Speech:
    """Audio as the server sent it, with the sentence it speaks (streamed) and when it arrived."""

    audio: np.ndarray
    sample_rate: int
    unknown_symbols: dict[str, int]
    sentence: str = ""
    arrived_s: float = 0.0


def request_inputs(module, text: str, voice: str | None = None, speed: float | None = None) -> list:
    """The inputs of one request to `tts` or `tts_stream`, for `module` tritonclient.http or tritonclient.grpc."""
    values = {"text": np.array([[text.encode()]], dtype=object)}
    if voice is not None:
        values["voice"] = np.array([[voice.encode()]], dtype=object)
    if speed is not None:
        values["speed"] = np.array([[speed]], dtype=np.float32)
    inputs = []
    for name, value in values.items():
        tensor = module.InferInput(name, list(value.shape), "BYTES" if value.dtype == object else "FP32")
        tensor.set_data_from_numpy(value)
        inputs.append(tensor)
    return inputs


def _speech(result, started: float) -> Speech:
    sentence = result.as_numpy("sentence")
    return Speech(result.as_numpy("audio").reshape(-1), int(result.as_numpy("sample_rate").reshape(-1)[0]),
                  json.loads(result.as_numpy("unknown_symbols").reshape(-1)[0]),
                  sentence.reshape(-1)[0].decode() if sentence is not None else "", time.perf_counter() - started)


def synthesize(url: str, text: str, voice: str | None = None, speed: float | None = None) -> Speech:
    """The whole utterance from the `tts` ensemble, over HTTP."""
    started = time.perf_counter()
    result = httpclient.InferenceServerClient(url).infer("tts", request_inputs(httpclient, text, voice, speed))
    return _speech(result, started)


def stream_events(grpc_url: str, text: str, voice: str | None = None, speed: float | None = None,
                  timeout_s: float = 120.0) -> Iterator[tuple[grpcclient.InferResult, InferenceServerException | None]]:
    """`tts_stream`'s (result, error) pairs over a gRPC stream, up to its final response or its first error."""
    client = grpcclient.InferenceServerClient(grpc_url)
    events: queue.Queue = queue.Queue()
    client.start_stream(callback=lambda result, error: events.put((result, error)))
    try:
        client.async_stream_infer("tts_stream", request_inputs(grpcclient, text, voice, speed),
                                  enable_empty_final_response=True)
        while True:
            result, error = events.get(timeout=timeout_s)
            yield result, error
            if error is not None or result.get_response().parameters["triton_final_response"].bool_param:
                return
    finally:
        client.stop_stream()
        client.close()


def stream(grpc_url: str, text: str, voice: str | None = None, speed: float | None = None,
           timeout_s: float = 120.0) -> list[Speech]:
    """`tts_stream`'s responses, one per sentence, over a gRPC stream; a server error is raised."""
    started = time.perf_counter()
    sentences = []
    for result, error in stream_events(grpc_url, text, voice, speed, timeout_s):
        if error is not None:
            raise error
        if result.get_response().outputs:
            sentences.append(_speech(result, started))
    return sentences


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("Example ", 1)[1].split(":", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("text", help="English text; each sentence is one streamed response")
    parser.add_argument("--out-dir", type=Path, default=Path("."), help="where whole.wav and streamed.wav go")
    parser.add_argument("--voice", default=None,
                        help="jf_alpha (default), jf_gongitsune, jf_nezumi, jf_tebukuro, jm_kumo")
    parser.add_argument("--speed", type=float, default=None, help="0.25 .. 4.0, 1.0 by default")
    parser.add_argument("--url", default="127.0.0.1:8000", help="Triton HTTP endpoint (host:port)")
    parser.add_argument("--grpc-url", default="127.0.0.1:8001", help="Triton gRPC endpoint (host:port)")
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    try:
        whole = synthesize(args.url, args.text, args.voice, args.speed)
        sentences = stream(args.grpc_url, args.text, args.voice, args.speed)
    except InferenceServerException as exc:
        print(f"error: {exc.message()}", file=sys.stderr)
        return 1

    write_wav(args.out_dir / "whole.wav", whole.audio, whole.sample_rate)
    print(f"whole: {whole.audio.size / whole.sample_rate:.2f} s at {whole.sample_rate} Hz in {whole.arrived_s:.2f} s"
          f" -> {args.out_dir / 'whole.wav'}")
    print(f"unknown symbols: {json.dumps(whole.unknown_symbols, ensure_ascii=False)}")
    for k, s in enumerate(sentences):
        print(f"sentence {k} at {s.arrived_s:.2f} s: {s.audio.size / s.sample_rate:.2f} s {s.sentence!r}")
    joined = np.concatenate([s.audio for s in sentences])
    write_wav(args.out_dir / "streamed.wav", joined, sentences[0].sample_rate)
    print(f"streamed: {len(sentences)} sentences, {joined.size / sentences[0].sample_rate:.2f} s -> "
          f"{args.out_dir / 'streamed.wav'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
