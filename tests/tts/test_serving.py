"""What the TTS Triton adapters share, outside Triton: segments as two tensors, request text, unknown symbols as
JSON, the model's own folder's files, and the sentence streaming loop (order, cancellation, empty text)."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tritonkit.pipelines.tts.frontend import Frontend, FrontendError
from tritonkit.pipelines.tts.runtime.serving import (
    VOCAB_FILE,
    own_file,
    pack_segments,
    text_of,
    unknown_json,
    unpack_segments,
)
from tritonkit.pipelines.tts.runtime.streaming import stream_sentences


def test_segments_round_trip_through_two_tensors() -> None:
    segments = [[5, 6, 7], [8], [9, 10]]
    tokens, lengths = pack_segments(segments)
    assert tokens.dtype == np.int64 and lengths.dtype == np.int32 and lengths.tolist() == [3, 1, 2]
    assert unpack_segments(tokens[None], lengths[None], max_tokens=3) == segments


@pytest.mark.parametrize(("tokens", "lengths", "problem"), [
    ([1, 2, 3], [2], "add up to the 3 tokens"),
    ([1, 2, 3], [3, 0], "must be positive"),
    ([1, 2], [], "must be positive"),
    ([1, 2, 3, 4], [4], "a segment of 4 tokens exceeds the model's 3"),
])
def test_inconsistent_segments_are_the_requests_error(tokens: list[int], lengths: list[int], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        unpack_segments(np.array(tokens, np.int64), np.array(lengths, np.int32), max_tokens=3)


def test_negative_token_ids_are_the_requests_error() -> None:
    with pytest.raises(ValueError, match=r"token ids must be non-negative, got -3"):
        unpack_segments(np.array([5, -3, 7], np.int64), np.array([3], np.int32), max_tokens=3)


def test_request_text_is_one_utf8_string() -> None:
    assert text_of(np.array([["Grüße.".encode()]], dtype=object)) == "Grüße."
    with pytest.raises(ValueError, match="one text per request"):
        text_of(np.array([[b"a"], [b"b"]], dtype=object))
    with pytest.raises(ValueError, match="not UTF-8"):
        text_of(np.array([[b"\xff\xfe"]], dtype=object))


def test_text_longer_than_max_chars_is_refused_with_the_limit_named() -> None:
    five = np.array([["Grüße".encode()]], dtype=object)   # 5 characters, 7 bytes: characters are counted
    assert text_of(five, max_chars=5) == "Grüße"
    with pytest.raises(ValueError) as refused:
        text_of(five, max_chars=4)
    assert str(refused.value) == ("text of 5 characters is longer than the limit (max_chars) of 4; split it into "
                                  "shorter requests, or raise the model's max_chars parameter")


def test_unknown_symbols_are_json_with_sorted_keys_and_symbols_kept() -> None:
    assert unknown_json(Counter()) == "{}"
    text = unknown_json(Counter({"ɬ": 2, "ʃ": 1, "!": 1}))
    assert text == '{"!": 1, "ɬ": 2, "ʃ": 1}' and json.loads(text) == {"ɬ": 2, "ʃ": 1, "!": 1}


def test_a_model_reads_its_own_version_folders_file(tmp_path: Path) -> None:
    """Triton from s3:// gives each model a folder of its own: the frontend reads vocab.json there, nowhere else."""
    (tmp_path / "frontend" / "2").mkdir(parents=True)
    (tmp_path / "frontend" / "2" / VOCAB_FILE).write_text("{}")
    (tmp_path / "speech" / "1").mkdir(parents=True)
    (tmp_path / "speech" / "1" / VOCAB_FILE).write_text("{}")
    args = {"model_repository": str(tmp_path / "frontend"), "model_version": "2"}
    assert own_file(args, VOCAB_FILE) == tmp_path / "frontend" / "2" / VOCAB_FILE
    with pytest.raises(FileNotFoundError,
                       match=r"frontend/1 has no vocab.json: give the model its own copy in the spec, "
                                                r"e.g. files: \{vocab.json: model:<the model that has "
                                                r"it>/vocab.json\}"):
        own_file({**args, "model_version": "1"}, VOCAB_FILE)   # the sibling speech/1 has one: not read


def _frontend_ids(frontend: Frontend, spoken: list[str]):
    """A synthesize step over the real frontend: the sentence's token ids stand in for its audio."""
    def synthesize(sentence: str) -> tuple[np.ndarray, int, str]:
        spoken.append(sentence)
        result = frontend(sentence)
        return np.array([i for s in result.segments for i in s.ids], np.float32), 24000, unknown_json(result.unknown)
    return synthesize


def test_sentences_stream_in_order_each_as_the_frontend_encodes_it(frontend: Frontend) -> None:
    spoken: list[str] = []
    chunks = list(stream_sentences("Dr. Smith paid $5. We drove to Llanelli!", _frontend_ids(frontend, spoken),
                                   lambda: False))
    assert [c.index for c in chunks] == [0, 1] and [c.text for c in chunks] == spoken
    assert spoken == ["Doctor Smith paid five dollars.", "We drove to Llanelli!"]
    whole = frontend("Dr. Smith paid $5. We drove to Llanelli!")
    assert np.concatenate([c.audio for c in chunks]).tolist() == [i for s in whole.segments for i in s.ids]
    assert [json.loads(c.unknown_symbols) for c in chunks] == [{}, {"ɬ": 1}]


def test_cancelling_stops_before_the_next_sentence(frontend: Frontend) -> None:
    spoken: list[str] = []
    stream = stream_sentences("One. Two. Three. Four.", _frontend_ids(frontend, spoken), lambda: len(spoken) >= 2)
    assert [c.text for c in stream] == ["One.", "Two."] and spoken == ["One.", "Two."]


def test_empty_text_fails_before_anything_is_synthesized(frontend: Frontend) -> None:
    spoken: list[str] = []
    with pytest.raises(FrontendError, match="text is empty; send at least one word"):
        next(stream_sentences(" \n", _frontend_ids(frontend, spoken), lambda: False))
    assert spoken == []
