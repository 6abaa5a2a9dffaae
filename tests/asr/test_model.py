"""The shipped CTC model: committed weights transcribe held-out voices, stream exactly, and export to ONNX."""
from __future__ import annotations

import json

import onnxruntime as ort
import pytest
import torch

from examples.asr import corpus
from examples.asr.heldout import read_heldout, read_wav, word_error_rate
from tests.asr.conftest import heldout_features
from tests.conftest import REPO_ROOT
from tritonkit.export import ExportJob, export_model
from tritonkit.export.progress import SilentProgress
from tritonkit.pipelines.asr.commands_ctc.model import (
    HERE,
    RECEPTIVE_FRAMES,
    SUBSAMPLING,
    TOKENS,
    WEIGHTS,
    greedy_decode,
    transcribe,
)
from tritonkit.pipelines.asr.commands_ctc.vocabulary import WORDS
from tritonkit.pipelines.asr.runtime.features import compute_fbank
from tritonkit.spec.export import ExportSpec, SourceSpec

pytestmark = pytest.mark.slow  # torch: runs and exports the shipped model over held-out audio (tens of seconds)

PROVENANCE = json.loads(WEIGHTS.with_suffix(".json").read_text())


def test_heldout_set_is_of_voices_never_trained_on():
    utterances = read_heldout()
    assert len(utterances) == PROVENANCE["heldout_wav_set"]["files"] >= 20
    assert not set(corpus.HELDOUT_VARIANTS) & set(corpus.TRAIN_VARIANTS)
    assert PROVENANCE["data_recipe"]["train_variants"] == corpus.TRAIN_VARIANTS
    for u in utterances:
        assert u.voice.split("+")[1] in corpus.HELDOUT_VARIANTS
        assert set(u.words) <= set(WORDS) and 1 <= len(u.words) <= 4


def test_committed_weights_transcribe_heldout_voices(model):
    utterances = read_heldout()
    hyps = [transcribe(model, compute_fbank(*read_wav(u.path))) for u in utterances]
    wer = word_error_rate([u.words for u in utterances], hyps)
    assert wer == pytest.approx(PROVENANCE["heldout_wav_set"]["greedy_wer"], abs=0.02)
    # 30 clips, 63 words: one wrong word is 1.6 points (the 400-utterance held-out figure, 9.2%, is the measure). Was
    # 0.15
    # while 3 clips were plain en-gb, a training voice (espeak-ng ignored their variant)
    assert wer <= 0.17
    right = [h for u, h in zip(utterances, hyps) if h == u.words]
    assert len(right) >= 0.8 * len(utterances)


def test_a_chunk_with_receptive_context_gives_the_offline_frames(model):
    """A streaming model that runs each chunk with RECEPTIVE_FRAMES of context on both sides is exact."""
    feats = torch.from_numpy(heldout_features(0))[None]
    with torch.no_grad():
        offline = model(feats)[0]
        for first, last in [(10, 30), (40, 41), (offline.shape[0] - 8, offline.shape[0])]:
            lo = max(0, SUBSAMPLING * first - RECEPTIVE_FRAMES - 1)
            lo -= lo % SUBSAMPLING  # chunks start on an even input frame
            hi = min(feats.shape[1], SUBSAMPLING * last + RECEPTIVE_FRAMES)
            chunk = model(feats[:, lo:hi])[0]
            skip = lo // SUBSAMPLING
            torch.testing.assert_close(chunk[first - skip:last - skip], offline[first:last], atol=1e-5, rtol=1e-5)
        assert not torch.allclose(model(feats[:, 20:60])[0, :5], offline[10:15],
                                  atol=1e-3)  # without context it differs


def test_exports_to_onnx_with_a_dynamic_time_axis(tmp_path, model):
    job = ExportJob("acoustic", SourceSpec(python="tritonkit.pipelines.asr.commands_ctc.model:build"),
                    ExportSpec.model_validate({"output_names": ["log_probs"],
                                               "dynamic_axes": {"features": {1: "frames"}}}), 8,
                    REPO_ROOT)
    result = export_model(job, tmp_path / "acoustic" / "1", tmp_path / "acoustic" / "golden", tmp_path / "cache",
                          SilentProgress())
    assert {t["name"]: t["dims"] for t in result.outputs} == {"log_probs": [-1, len(TOKENS)]}
    session = ort.InferenceSession(str(result.onnx_path), providers=["CPUExecutionProvider"])
    for index in (1, 2):
        feats = heldout_features(index)
        (log_probs,) = session.run(None, {"features": feats[None]})
        assert log_probs.shape[1] == (feats.shape[0] + 1) // SUBSAMPLING
        assert greedy_decode(log_probs[0]) == transcribe(model, feats)


def test_lang_files_match_the_model():
    lang = HERE / "lang"
    assert [line.split() for line in (lang / "tokens.txt").read_text().splitlines()] == [
        [t, str(i)] for i, t in enumerate(TOKENS)
    ]
    lexicon = {line.split()[0]: line.split()[1:] for line in (lang / "lexicon.txt").read_text().splitlines()}
    assert sorted(lexicon) == sorted(WORDS)
    assert all(pron == [*word, "|"] for word, pron in lexicon.items())
    assert (lang / "grammar.txt").read_text() == corpus.GRAMMAR
    assert all(set(line.split()) <= set(WORDS) for line in (lang / "corpus.txt").read_text().splitlines())
