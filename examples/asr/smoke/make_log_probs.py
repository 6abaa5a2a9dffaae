"""Writes the `decoder` smoke case's input: CTC log-probs of one held-out clip from the committed model.

    .venv/bin/python examples/asr/smoke/make_log_probs.py

The decoder is model-independent (LOG_PROBS dims [-1, -1]), so `tritonkit smoke` cannot make up inputs it
accepts; examples/asr/tritonkit.yaml's `smoke:` gives it these log-probs ([frames, 27], float32, the
acoustic model's output for heldout/heldout_10.wav) and the clip's transcript. Refuses to write a file whose
greedy transcript is not the reference, so the known answer stays a right one.
"""
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from examples.asr.heldout import read_heldout, read_wav  # noqa: E402
from examples.asr.model import greedy_decode, load  # noqa: E402
from tritonkit.pipelines.asr.runtime.features import compute_fbank  # noqa: E402

CLIP = "heldout_10.wav"
OUT = Path(__file__).resolve().parent / "heldout_10_log_probs.npy"


def main() -> None:
    utterance = next(u for u in read_heldout() if u.path.name == CLIP)
    features = compute_fbank(*read_wav(utterance.path))
    with torch.no_grad():
        log_probs = load()(torch.from_numpy(features)[None])[0].numpy().astype(np.float32)
    if greedy_decode(log_probs) != utterance.words:
        raise SystemExit(f"{CLIP}: greedy transcript {greedy_decode(log_probs)} is not the reference {utterance.words}")
    np.save(OUT, log_probs)
    print(f"{OUT.name}: {list(log_probs.shape)} -> {' '.join(utterance.words)!r}")


if __name__ == "__main__":
    main()
