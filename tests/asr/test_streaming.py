"""StreamingRecognizer in process: the shipped model over its built graph, many streams per step, refusals."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.conftest import REPO_ROOT
from tritonkit.pipelines.asr.graph.build import build_graph
from tritonkit.pipelines.asr.runtime.decoder import DecoderConfig, Graph, WfstDecoder
from tritonkit.pipelines.asr.runtime.features import compute_fbank, resample
from tritonkit.pipelines.asr.runtime.serving import own_folder, required_parameter
from tritonkit.pipelines.asr.runtime.stream_windows import Receptive
from tritonkit.pipelines.asr.runtime.streaming import Chunk, StreamingRecognizer
from tritonkit.pipelines.asr.runtime.streams import StreamLimitError, UnknownStreamError

if str(REPO_ROOT) not in sys.path:  # `examples` is a package at the repository root
    sys.path.insert(0, str(REPO_ROOT))

from examples.asr.heldout import read_heldout, read_wav  # noqa: E402
from tritonkit.pipelines.asr.commands_ctc.model import HERE, RECEPTIVE_FRAMES, SUBSAMPLING, load  # noqa: E402

LANG = HERE / "lang"
CHUNK = 2560  # 160 ms


@pytest.fixture(scope="module")
def decoder(tmp_path_factory: pytest.TempPathFactory) -> WfstDecoder:
    out = tmp_path_factory.mktemp("graph")
    build_graph(LANG / "tokens.txt", LANG / "lexicon.txt", "grammar", LANG / "grammar.txt", out)
    return WfstDecoder(Graph.load(out), DecoderConfig(subsampling=SUBSAMPLING))


@pytest.fixture(scope="module")
def acoustic():
    model = load()
    calls: list[int] = []

    def run(features: np.ndarray) -> np.ndarray:
        calls.append(len(features))
        with torch.no_grad():
            return model(torch.from_numpy(features)).numpy()

    run.calls = calls  # type: ignore[attr-defined]
    return run


def _recognizer(decoder: WfstDecoder, max_streams: int = 8,
                max_chunk_seconds: float | None = None) -> StreamingRecognizer:
    return StreamingRecognizer(decoder, Receptive(RECEPTIVE_FRAMES, SUBSAMPLING), max_streams, idle_timeout_s=60,
                               max_chunk_seconds=max_chunk_seconds)


@pytest.mark.slow  # streams held-out audio through the model: seconds each
def test_interleaved_streams_finals_equal_offline_with_batched_calls(decoder, acoustic) -> None:
    audio = [read_wav(u.path)[0] for u in read_heldout()[:5]]
    recognizer = _recognizer(decoder)
    pieces = [[pcm[i:i + CHUNK] for i in range(0, pcm.size, CHUNK)] for pcm in audio]
    finals: dict[int, str] = {}
    acoustic.calls.clear()
    for step in range(max(len(p) for p in pieces)):
        chunks = [
            Chunk(2**40 + k, p[step], step == 0, step == len(p) - 1) for k, p in enumerate(pieces) if step < len(p)
        ]
        for chunk, result in zip(chunks, recognizer.step(chunks, acoustic)):
            assert not isinstance(result, Exception), result
            if chunk.end:
                finals[chunk.key - 2**40] = result.text
    for k, pcm in enumerate(audio):
        with torch.no_grad():
            log_probs = load()(torch.from_numpy(compute_fbank(pcm, 16000))[None])[0].numpy()
        assert finals[k] == decoder.decode(log_probs).text
    assert max(acoustic.calls) > 1 and len(recognizer.table) == 0


@pytest.mark.slow  # streams held-out audio through the model: seconds each
@pytest.mark.parametrize("rate", [22050, 44100])
def test_streams_at_other_rates_equal_offline_at_that_rate(decoder, acoustic, rate: int) -> None:
    """A stream whose START gives SAMPLE_RATE is resampled as the offline path resamples (the same samples), so its
    final transcript is the offline one of the same audio; interleaved with a 16 kHz stream of the same clip."""
    model = load()
    for utterance in read_heldout()[:3]:
        at_16k = read_wav(utterance.path)[0]
        pcm = resample(at_16k, 16000, rate)
        with torch.no_grad():
            offline = [
                decoder.decode(model(torch.from_numpy(compute_fbank(x, r))[None])[0].numpy()).text
                for x, r in [(pcm, rate), (at_16k, 16000)]
            ]
        recognizer = _recognizer(decoder)
        chunk = rate * 160 // 1000
        pieces = [pcm[i:i + chunk] for i in range(0, pcm.size, chunk)]
        finals = []
        for step, piece in enumerate(pieces):
            end = step == len(pieces) - 1
            results = recognizer.step([Chunk(1, piece, step == 0, end, rate if step == 0 else None),
                                       Chunk(2, at_16k[step * CHUNK:(step + 1) * CHUNK], step == 0, end)], acoustic)
            assert not any(isinstance(r, Exception) for r in results), results
            finals = [r.text for r in results]  # type: ignore[union-attr]
        assert finals == offline, (utterance.words, finals, offline)


def test_a_chunk_at_another_rate_than_its_streams_is_refused_and_leaves_the_stream(decoder, acoustic) -> None:
    recognizer = _recognizer(decoder, max_streams=1)
    assert recognizer.step([Chunk(1, np.zeros(3528, np.float32), True, False, 22050)], acoustic)[0].text == ""  # type: ignore[union-attr]
    (refused,) = recognizer.step([Chunk(1, np.zeros(2560, np.float32), False, False, 16000)], acoustic)
    assert str(refused) == ("a chunk at 16000 Hz in a stream that started at 22050 Hz; send every chunk of a stream at "
                            "its first chunk's SAMPLE_RATE")
    assert recognizer.step([Chunk(1, np.zeros(3528, np.float32), False, True, 22050)], acoustic)[0].text == ""  # type: ignore[union-attr]
    (refused,) = recognizer.step([Chunk(2, np.zeros(10, np.float32), True, False, 0)], acoustic)
    assert str(refused) == "sample rate must be positive, got 0" and len(recognizer.table) == 0


def test_unknown_streams_and_too_many_are_refused_per_chunk(decoder, acoustic) -> None:
    recognizer = _recognizer(decoder, max_streams=1)
    silence = np.zeros(CHUNK, np.float32)
    results = recognizer.step([Chunk(1, silence, True, False), Chunk(2, silence, False, False),
                               Chunk(3, silence, True, False)], acoustic)
    assert results[0].text == ""  # type: ignore[union-attr]
    assert isinstance(results[1], UnknownStreamError) and "send its first chunk with the START flag" in str(results[1])
    assert isinstance(results[2], StreamLimitError)


def test_a_chunk_longer_than_max_chunk_seconds_is_refused_and_leaves_its_stream_as_it_was(decoder, acoustic) -> None:
    recognizer = _recognizer(decoder, max_streams=1, max_chunk_seconds=1.0)
    long, short = np.zeros(CHUNK * 7, np.float32), np.zeros(CHUNK, np.float32)   # 1.12 s, 0.16 s
    (refused,) = recognizer.step([Chunk(1, long, True, False)], acoustic)
    assert isinstance(refused, ValueError) and str(refused).startswith(
        "a chunk of 1.12 s is longer than the limit (max_chunk_seconds) of 1 s")
    assert len(recognizer.table) == 0   # the refused START opened no stream: the only place is still free
    assert recognizer.step([Chunk(2, short, True, False)], acoustic)[0].text == ""  # type: ignore[union-attr]
    (refused,) = recognizer.step([Chunk(2, long, False, True)], acoustic)   # a live stream's too-long END
    assert isinstance(refused, ValueError) and len(recognizer.table) == 1   # stream 2 is still live
    assert recognizer.step([Chunk(2, short, False, True)], acoustic)[0].text == ""  # type: ignore[union-attr]
    assert len(recognizer.table) == 0


def test_the_graph_and_receptive_frames_come_from_the_models_own_folder_and_config(tmp_path: Path) -> None:
    """Triton from s3:// gives each model a folder of its own: a sibling's TLG.fst or config.pbtxt is not there."""
    (tmp_path / "acoustic" / "1").mkdir(parents=True)
    (tmp_path / "acoustic" / "1" / "TLG.fst").write_bytes(b"graph")
    args = {"model_repository": str(tmp_path / "asr_stream"), "model_version": "1"}
    with pytest.raises(FileNotFoundError,
                       match=r"asr_stream/1 has no TLG.fst: copy the graph into this model in the spec"):
        own_folder(args)
    (tmp_path / "asr_stream" / "1").mkdir(parents=True)
    (tmp_path / "asr_stream" / "1" / "TLG.fst").write_bytes(b"graph")
    assert own_folder(args) == tmp_path / "asr_stream" / "1"
    assert required_parameter({"receptive_frames": "103"}, "receptive_frames") == "103"
    with pytest.raises(ValueError,
                       match=r"parameter 'receptive_frames' is not set: give it in the spec \(e.g. receptive_frames: "
                                         r"model:acoustic/receptive_frames\)"):
        required_parameter({}, "receptive_frames")


def test_a_chunk_with_nan_samples_is_refused_and_leaves_its_stream_as_it_was(decoder, acoustic) -> None:
    recognizer = _recognizer(decoder, max_streams=1)
    bad, short = np.full(CHUNK, np.nan, np.float32), np.zeros(CHUNK, np.float32)
    (refused,) = recognizer.step([Chunk(1, bad, True, False)], acoustic)
    assert isinstance(refused, ValueError) and "NaN" in str(refused)
    assert len(recognizer.table) == 0   # the refused START opened no stream: the only place is still free
    assert recognizer.step([Chunk(2, short, True, False)], acoustic)[0].text == ""  # type: ignore[union-attr]
    (refused,) = recognizer.step([Chunk(2, bad, False, True)], acoustic)   # a live stream's bad END
    assert isinstance(refused, ValueError) and len(recognizer.table) == 1   # stream 2 is still live
    (refused,) = recognizer.step([Chunk(2, bad, True, False)], acoustic)   # a bad restart keeps the live stream
    assert isinstance(refused, ValueError) and len(recognizer.table) == 1
    assert recognizer.step([Chunk(2, short, False, True)], acoustic)[0].text == ""  # type: ignore[union-attr]
    assert len(recognizer.table) == 0


def test_an_empty_chunk_and_an_end_on_the_first_chunk_answer_and_free_the_stream(decoder, acoustic) -> None:
    recognizer = _recognizer(decoder, max_streams=1)
    empty = np.zeros(0, np.float32)
    assert [r.text for r in recognizer.step([Chunk(1, empty, True, True)], acoustic)] == [""]  # type: ignore[union-attr]
    assert len(recognizer.table) == 0
    assert [r.text for r in recognizer.step([Chunk(2, empty, True, False)], acoustic)] == [""]  # type: ignore[union-attr]
    assert recognizer.step([Chunk(2, empty, False, True)], acoustic)[0].text == ""  # type: ignore[union-attr]
    assert len(recognizer.table) == 0
