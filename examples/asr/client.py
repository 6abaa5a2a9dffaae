"""Transcribe a WAV file with a served ASR pipeline: whole over HTTP (`asr`), then streamed over gRPC (`asr_stream`).

The two ways a client talks to the pipeline of tritonkit:ensembles/asr.yaml:
- offline: one request to the `asr` ensemble with all the audio (PCM [1, samples] float32 in [-1, 1] and
  SAMPLE_RATE [1, 1] int32); the answer is TRANSCRIPT and WORDS (JSON: word, start_s, end_s per word).
- streaming: the audio in 160 ms chunks to `asr_stream`, one sequence (a uint64 id, START on the first chunk,
  END on the last); each chunk answers the partial transcript so far, the END chunk the final one. The stream's
  state lives in the server keyed by the id, so concurrent streams need distinct ids. SAMPLE_RATE goes with the
  first chunk (any rate; the server resamples to 16 kHz as the offline path does).

Example (the asr starter, `tritonkit init --pipeline asr`, served on the default ports; from the repository root):
    python -m examples.asr.client examples/asr/heldout/heldout_10.wav --url 127.0.0.1:8000 --grpc-url 127.0.0.1:8001
"""
from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from examples.asr.heldout import read_wav

#: Milliseconds of audio per streamed chunk.
CHUNK_MS = 160


def transcribe(url: str, pcm: np.ndarray, rate: int) -> tuple[str, list[dict]]:
    """The `asr` ensemble's transcript and timed words for a whole utterance, over HTTP."""
    client = httpclient.InferenceServerClient(url)
    inputs = [httpclient.InferInput("PCM", [1, pcm.size], "FP32"),
              httpclient.InferInput("SAMPLE_RATE", [1, 1], "INT32")]
    inputs[0].set_data_from_numpy(pcm[None].astype(np.float32))
    inputs[1].set_data_from_numpy(np.array([[rate]], np.int32))
    result = client.infer("asr", inputs)
    return result.as_numpy("TRANSCRIPT")[0, 0].decode(), json.loads(result.as_numpy("WORDS")[0, 0])


def stream(grpc_url: str, pcm: np.ndarray, sequence_id: int, rate: int = 16000) -> list[str]:
    """`asr_stream`'s answer to each 160 ms chunk of `rate` Hz audio, over gRPC: partial transcripts, the final one
    last."""
    client = grpcclient.InferenceServerClient(grpc_url)
    chunk = rate * CHUNK_MS // 1000
    pieces = [pcm[i:i + chunk] for i in range(0, pcm.size, chunk)]
    answers = []
    for k, piece in enumerate(pieces):
        inputs = [grpcclient.InferInput("PCM", [1, piece.size], "FP32")]
        inputs[0].set_data_from_numpy(piece[None].astype(np.float32))
        if k == 0:
            inputs.append(grpcclient.InferInput("SAMPLE_RATE", [1, 1], "INT32"))
            inputs[1].set_data_from_numpy(np.array([[rate]], np.int32))
        result = client.infer("asr_stream", inputs, sequence_id=sequence_id,
                              sequence_start=k == 0, sequence_end=k == len(pieces) - 1)
        answers.append(result.as_numpy("TRANSCRIPT")[0, 0].decode())
    return answers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("Example ", 1)[1].split(":", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("wav", type=Path, help="mono 16-bit WAV, any sample rate")
    parser.add_argument("--url", default="127.0.0.1:8000", help="Triton HTTP endpoint (host:port)")
    parser.add_argument("--grpc-url", default="127.0.0.1:8001", help="Triton gRPC endpoint (host:port)")
    parser.add_argument("--sequence-id", type=int, default=None,
                        help="stream id, 1 .. 2^63-1 (tritonclient sends it as int64); random by default")
    args = parser.parse_args(argv)
    if args.sequence_id is not None and not 0 < args.sequence_id < 2**63:
        parser.error(f"--sequence-id: {args.sequence_id} is out of range; use 1 .. 2^63-1")
    pcm, rate = read_wav(args.wav)

    text, words = transcribe(args.url, pcm, rate)
    print(f"offline: {text}")
    for w in words:
        print(f"  {w['word']:<10} {w['start_s']:6.2f} - {w['end_s']:6.2f} s")

    sequence_id = args.sequence_id or random.SystemRandom().randrange(2**32, 2**63)
    *partials, final = stream(args.grpc_url, pcm, sequence_id, rate)
    for k, partial in enumerate(partials):
        print(f"partial {(k + 1) * CHUNK_MS:5d} ms: {partial}")
    print(f"final: {final}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
