"""Train the shipped command-word CTC model on espeak-ng speech, on the CPU, and write its files with provenance.

Writes the shipped model's files in toolkit/tritonkit/pipelines/asr/commands_ctc/ (weights/ctc_commands.pt + .json
provenance, lang/: tokens, lexicon, grammar, corpus; smoke/: known-answer clips for `tritonkit smoke`) and
examples/asr/heldout/ (WAVs of voices never used in training, with transcripts). Not part of `make test`. Example:
    .venv/bin/python scripts/train_asr.py --seed 0 --utterances 12000 --steps 1800
`--init` continues from existing weights (their feature normalisation kept) instead of random ones, e.g. to train the
shipped model further on a corrected corpus where a run from scratch does not fit the time; the provenance then
records the run it started from.
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import subprocess
import sys
import time
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import torch
from torch import nn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from examples.asr import corpus  # noqa: E402
from examples.asr.heldout import HELDOUT_DIR, edit_distance, read_wav, write_wav  # noqa: E402
from tritonkit.pipelines.asr.commands_ctc.model import (  # noqa: E402
    HERE,
    TOKENS,
    WEIGHTS,
    WORD_END,
    CommandCTC,
    greedy_decode,
    load,
    output_frames,
)
from tritonkit.pipelines.asr.commands_ctc.vocabulary import WORDS  # noqa: E402
from tritonkit.pipelines.asr.runtime.features import SAMPLE_RATE, compute_fbank  # noqa: E402

LANG = HERE / "lang"
SMOKE = HERE / "smoke"
SMOKE_CLIPS = 2
TOKEN_ID = {t: i for i, t in enumerate(TOKENS)}


def spell(words: list[str]) -> list[int]:
    """CTC targets: each word's letters followed by the word end `|`."""
    return [TOKEN_ID[t] for w in words for t in [*w, WORD_END]]


def utterance(job: tuple[int, int, bool]) -> tuple[np.ndarray, list[str], str, np.ndarray]:
    """One synthesized, augmented utterance: (fbank float16, words, voice name, 16 kHz PCM)."""
    seed, index, heldout = job
    rng = random.Random(seed * 1_000_003 + index * 2 + heldout)
    words = corpus.grammar_sentence(rng) if heldout else corpus.training_sentence(rng)
    voice = corpus.random_voice(rng, corpus.HELDOUT_VARIANTS if heldout else corpus.TRAIN_VARIANTS)
    pcm = corpus.augment(corpus.synthesize(words, voice), np.random.default_rng([seed, index, int(heldout)]))
    return compute_fbank(pcm, SAMPLE_RATE).astype(np.float16), words, voice.name, pcm


def synthesize_set(
    seed: int, count: int, heldout: bool, workers: int
) -> list[tuple[np.ndarray, list[str], str, np.ndarray]]:
    with Pool(workers) as pool:
        items = pool.map(utterance, [(seed, i, heldout) for i in range(count)], chunksize=32)
    return [(f, w, v, p if heldout else np.zeros(0, np.float32)) for f, w, v, p in items]


def batches(lengths: list[int], batch: int, rng: random.Random) -> list[list[int]]:
    """Shuffled batches of similar length (less padding): sort within pools of 32 batches."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    out = []
    for start in range(0, len(order), batch * 32):
        pool = sorted(order[start:start + batch * 32], key=lambda i: lengths[i])
        out += [pool[i:i + batch] for i in range(0, len(pool), batch)]
    rng.shuffle(out)
    return out


def collate(items: list[tuple[np.ndarray, list[str]]], mean: torch.Tensor, rng: np.random.Generator,
            masks: bool) -> tuple[torch.Tensor, ...]:
    """Pad with the mean frame (zero after normalisation), optionally SpecAugment time/frequency masks."""
    frames = max(f.shape[0] for f, _ in items)
    x = mean.repeat(len(items), frames, 1)
    for b, (f, _) in enumerate(items):
        x[b, : f.shape[0]] = torch.from_numpy(f.astype(np.float32))
        if masks:
            for _ in range(2):
                w, lo = int(rng.integers(0, 11)), int(rng.integers(0, 70))
                x[b, :, lo:lo + w] = mean[lo:lo + w]
                w, lo = int(rng.integers(0, 16)), int(rng.integers(0, max(1, f.shape[0] - 15)))
                x[b, lo:lo + w] = mean
    targets = [spell(w) for _, w in items]
    return (x, torch.tensor([output_frames(f.shape[0]) for f, _ in items]),
            torch.tensor([t for ts in targets for t in ts]),
            torch.tensor([len(t) for t in targets]))


def error_rates(model: nn.Module, items: list[tuple[np.ndarray, list[str]]]) -> tuple[float, float, list[list[str]]]:
    """Greedy CTC word and character error rates (edit distance / reference length) over `items`."""
    hyps, word_err, char_err, words, chars = [], 0, 0, 0, 0
    model.eval()
    with torch.no_grad():
        for f, ref in items:
            hyp = greedy_decode(model(torch.from_numpy(f.astype(np.float32))[None])[0].numpy())
            hyps.append(hyp)
            word_err += edit_distance(ref, hyp)
            char_err += edit_distance(list(" ".join(ref)), list(" ".join(hyp)))
            words, chars = words + len(ref), chars + len(" ".join(ref))
    return word_err / words, char_err / chars, hyps


def write_lang(seed: int) -> None:
    """tokens.txt (`symbol id`), lexicon.txt (`word tokens...`), and G's sources: the grammar and sentences of it."""
    LANG.mkdir(parents=True, exist_ok=True)
    (LANG / "tokens.txt").write_text("".join(f"{t} {i}\n" for i, t in enumerate(TOKENS)))
    (LANG / "lexicon.txt").write_text("".join(f"{w} {' '.join([*w, WORD_END])}\n" for w in sorted(WORDS)))
    (LANG / "grammar.txt").write_text(corpus.GRAMMAR)
    (LANG / "corpus.txt").write_text("\n".join(corpus.grammar_corpus(3000, seed)) + "\n")


def write_heldout(items: list[tuple[np.ndarray, list[str], str, np.ndarray]], count: int) -> None:
    """The first `count` held-out utterances as 16-bit 16 kHz WAVs with a transcript list."""
    HELDOUT_DIR.mkdir(parents=True, exist_ok=True)
    lines = []
    for i, (_, words, voice, pcm) in enumerate(items[:count]):
        name = f"heldout_{i:02d}.wav"
        write_wav(HELDOUT_DIR / name, pcm, SAMPLE_RATE)
        lines.append(f"{name}\t{voice}\t{' '.join(words)}\n")
    (HELDOUT_DIR / "transcripts.tsv").write_text("".join(lines))


def write_smoke(model: nn.Module, seed: int, first: int) -> None:
    """Known answers for `tritonkit smoke` (the asr starter's spec): WAVs of the first SMOKE_CLIPS held-out-voice
    utterances from index `first` on (after the WAV set; never trained on) of 2+ words whose greedy transcript, from
    the WAV as written, is the reference, and the first one's log-probs for the decoder. A clip the model gets
    wrong would be a wrong known answer, so it is skipped."""
    SMOKE.mkdir(parents=True, exist_ok=True)
    for old in SMOKE.glob("*"):
        old.unlink()
    model.eval()
    written: list[str] = []
    for index in itertools.count(first):
        _, words, _, pcm = utterance((seed, index, True))
        path = SMOKE / f"{'_'.join(words)}.wav"
        if len(words) < 2 or path.exists():  # a sentence heard already
            continue
        write_wav(path, pcm, SAMPLE_RATE)
        with torch.no_grad():
            log_probs = model(torch.from_numpy(compute_fbank(*read_wav(path)))[None])[0].numpy().astype(np.float32)
        if greedy_decode(log_probs) != words:
            path.unlink()
            continue
        if not written:
            np.save(path.with_name(f"{path.stem}_log_probs.npy"), log_probs)
        written.append(f"{path.name} (utterance {index}): {' '.join(words)!r}")
        if len(written) == SMOKE_CLIPS:
            break
    print("smoke clips:", "; ".join(written))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--utterances", type=int, default=12000, help="training utterances synthesized")
    ap.add_argument("--eval-utterances", type=int, default=400, help="held-out-voice utterances for the error rates")
    ap.add_argument("--heldout-wavs", type=int, default=30, help="held-out utterances written as WAV files")
    ap.add_argument("--steps", type=int, default=1800)
    ap.add_argument("--batch", type=int, default=48)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=2, help="torch threads")
    ap.add_argument("--workers", type=int, help="espeak-ng synthesis processes (default: --threads)")
    ap.add_argument("--init", type=Path,
                    help="start from these weights (e.g. the committed ones) instead of random ones")
    ap.add_argument("--dry-run", action="store_true", help="train but write nothing (for timing)")
    ap.add_argument("--lang-only", action="store_true", help="only write lang/ (tokens, lexicon, grammar, corpus)")
    ap.add_argument("--smoke-only", action="store_true", help="only write smoke/ with the committed weights")
    args = ap.parse_args()
    if args.lang_only:
        write_lang(args.seed)
        return
    if args.smoke_only:
        write_smoke(load(), args.seed, args.heldout_wavs)
        return
    try:
        corpus.check_distinct_voices(corpus.TRAIN_VARIANTS + corpus.HELDOUT_VARIANTS)
    except ValueError as err:
        print(f"examples/asr/corpus.py: TRAIN_VARIANTS/HELDOUT_VARIANTS: {err}", file=sys.stderr)
        sys.exit(2)
    start = time.time()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    start_provenance = json.loads(args.init.with_suffix(".json").read_text()) if args.init else None
    train = synthesize_set(args.seed, args.utterances, False, args.workers or args.threads)
    heldout = synthesize_set(args.seed, args.eval_utterances, True, args.workers or args.threads)
    synth_s = time.time() - start
    print(f"synthesized {len(train)} + {len(heldout)} utterances in {synth_s:.0f} s", flush=True)

    if args.init:
        model = load(args.init)
        initial_wer, _, _ = error_rates(model, [(f, w) for f, w, *_ in heldout])
        print(f"held-out greedy WER of {args.init.name} before training: {initial_wer:.4f}", flush=True)
    else:
        model = CommandCTC()
        feats = np.concatenate([f for f, *_ in train[:2000]]).astype(np.float32)
        model.feat_mean.copy_(torch.from_numpy(feats.mean(0)))
        model.feat_std.copy_(torch.from_numpy(feats.std(0) + 1e-3))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-2)
    warmup = max(1, args.steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / args.steps)))
    )
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    rng, np_rng = random.Random(args.seed), np.random.default_rng(args.seed)
    lengths = [f.shape[0] for f, *_ in train]
    losses: list[float] = []
    log: list[dict[str, float]] = []
    step, epoch, train_start = 0, 0, time.time()
    while step < args.steps:
        epoch += 1
        for idx in batches(lengths, args.batch, rng):
            if step >= args.steps:
                break
            model.train()
            x, in_len, targets, tgt_len = collate(
                [(train[i][0], train[i][1]) for i in idx], model.feat_mean, np_rng, masks=True
            )
            loss = ctc(model(x).transpose(0, 1), targets, in_len, tgt_len)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            sched.step()
            losses.append(loss.item())
            step += 1
            if step % 100 == 0:
                log.append({"step": step, "loss": round(float(np.mean(losses[-100:])), 4),
                            "seconds": round(time.time() - train_start)})
                print(log[-1], flush=True)
    train_s = time.time() - train_start
    wer, cer, _ = error_rates(model, [(f, w) for f, w, *_ in heldout])
    train_wer, _, _ = error_rates(model, [(f, w) for f, w, *_ in train[:400]])
    wav_wer, _, hyps = error_rates(model, [(f, w) for f, w, *_ in heldout[: args.heldout_wavs]])
    total_s = time.time() - start
    print(f"held-out greedy WER {wer:.4f} CER {cer:.4f} (train-voice WER {train_wer:.4f}); WAV set WER {wav_wer:.4f}; "
          f"train {train_s:.0f} s, total {total_s:.0f} s", flush=True)
    if args.dry_run:
        return
    WEIGHTS.parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.eval().state_dict(), WEIGHTS)
    write_lang(args.seed)
    write_heldout(heldout, args.heldout_wavs)
    write_smoke(model, args.seed, args.heldout_wavs)
    espeak = subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True).stdout.strip()
    provenance = {
        "script": "scripts/train_asr.py", "command": " ".join(["scripts/train_asr.py", *sys.argv[1:]]),
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "seed": args.seed, "torch": torch.__version__, "espeak_ng": espeak, "cpu_threads": args.threads,
        "data_recipe": {
            "synthesizer": "espeak-ng --stdout, -v ACCENT+VARIANT -s 130..230 -p 25..75 -g 0..12, resampled to 16 kHz",
            "sentences": "60% command grammar (examples/asr/corpus.py:grammar_sentence), 40% random 1-4 word strings",
            "augmentation": "0-0.3 s silence each side, peak gain 0.05-0.9, white or brown noise at 5-40 dB SNR; "
                            "SpecAugment during training (2 freq masks <= 10 bins, 2 time masks <= 15 frames)",
            "features": "80-dim log-mel fbank, kaldi-native-fbank, dither 0, snip_edges false (runtime/features.py)",
            "words": WORDS, "accents": corpus.ACCENTS,
            "train_variants": corpus.TRAIN_VARIANTS, "heldout_variants": corpus.HELDOUT_VARIANTS,
            "train_utterances": len(train), "eval_utterances": len(heldout),
        },
        "tokens": TOKENS, "parameters": sum(p.numel() for p in model.parameters()),
        "steps": step, "epochs": round(step * args.batch / len(train), 2), "batch": args.batch,
        "final_loss": round(float(np.mean(losses[-100:])), 4), "loss_log": log,
        "heldout_greedy_wer": round(wer, 4), "heldout_greedy_cer": round(cer, 4),
        "train_voice_greedy_wer": round(train_wer, 4),
        "heldout_wav_set": {"files": args.heldout_wavs, "greedy_wer": round(wav_wer, 4)},
        "seconds": {"synthesis": round(synth_s), "training": round(train_s), "total": round(total_s)},
    }
    if start_provenance:
        provenance["initialized_from"] = {"heldout_greedy_wer_before": round(initial_wer, 4),
                                          "provenance": start_provenance}
    WEIGHTS.with_suffix(".json").write_text(json.dumps(provenance, indent=2) + "\n")
    print(f"wrote {WEIGHTS.relative_to(REPO)}, lang/, smoke/, {HELDOUT_DIR.relative_to(REPO)}/ ({args.heldout_wavs} "
          f"WAVs); hypotheses of the WAV set: {hyps}")


if __name__ == "__main__":
    main()
