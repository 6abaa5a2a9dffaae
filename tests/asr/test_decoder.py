"""The runtime decoder: word times, streaming equal to offline, the lattice decoder, and greedy CTC."""
from __future__ import annotations

import numpy as np
import pytest

from tests.asr.vocab import GAP, HOLD, LEAD, TOKENS, frame_tokens, posteriors, write_inputs
from tritonkit.pipelines.asr.graph.build import build_graph
from tritonkit.pipelines.asr.runtime.decoder import (
    DecoderConfig,
    Graph,
    WfstDecoder,
    Word,
    greedy_decode,
    greedy_tokens,
)


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> Graph:
    inputs = write_inputs(tmp_path_factory.mktemp("vocab"))
    out = tmp_path_factory.mktemp("graph")
    build_graph(inputs["tokens"], inputs["lexicon"], "grammar", inputs["grammar"], out)
    return Graph.load(out)


def _expected_words(words: list[str], scale: float) -> list[Word]:
    """Each word from its first letter's first frame to its last letter's last frame + 1 (layout of
    vocab.posteriors)."""
    out, frame = [], LEAD
    for word in words:
        length = HOLD * len(word) + sum(a == b for a, b in zip(word, word[1:]))  # a blank between doubled letters
        out.append(Word(word, round(frame * scale, 6), round((frame + length) * scale, 6)))
        frame += length + GAP
    return out


def test_word_times_follow_frames_shift_and_subsampling(graph: Graph) -> None:
    words = ["call", "one", "one"]
    result = WfstDecoder(graph, DecoderConfig(frame_shift_s=0.01, subsampling=4)).decode(posteriors(words))
    assert result.words == _expected_words(words, 0.04)
    assert result.words[0] == Word("call", 0.16, 0.68)  # c at frames 4-6, ..., l l: 10-12, blank 13, 14-16
    assert result.frames == len(frame_tokens(words))


@pytest.mark.parametrize("chunk", [1, 5, 16])
def test_streaming_final_equals_offline_and_partials_grow(graph: Graph, chunk: int) -> None:
    decoder = WfstDecoder(graph, DecoderConfig(subsampling=4))
    log_probs = posteriors(["call", "zero", "four", "two"], peak=0.7)
    offline = decoder.decode(log_probs)
    stream = decoder.stream()
    partials = [stream.accept(log_probs[i:i + chunk]).text for i in range(0, len(log_probs), chunk)]
    final = stream.finalize()
    assert final == offline and final.text == "call zero four two"
    assert partials[-1] == final.text
    assert all(offline.text.startswith(p) for p in partials)  # the best partial path never says what was not heard
    assert len(set(partials)) > 3


def test_partial_result_mid_grammar_is_the_best_path_not_a_complete_sentence(graph: Graph) -> None:
    stream = WfstDecoder(graph).stream()
    # "go" + blanks: "go up" and "go down" are complete but unheard; the partial result is what was heard
    assert stream.accept(posteriors(["go"])).text == "go"
    assert stream.accept(posteriors(["up"])[LEAD:]).text == "go up"
    assert stream.finalize().text == "go up"


def test_unfinished_sentence_falls_back_to_the_best_partial_path(graph: Graph) -> None:
    decoder = WfstDecoder(graph)
    assert decoder.decode(posteriors(["call"])).text == "call"  # no final state reached: call needs a digit
    assert decoder.decode(np.zeros((0, len(TOKENS)), np.float32)).text == ""


def test_lattice_decoder_agrees_with_faster_decoder(graph: Graph) -> None:
    log_probs = posteriors(["call", "seven", "eight"], peak=0.6)
    lattice = WfstDecoder(graph, DecoderConfig(lattice_beam=6.0)).decode(log_probs)
    assert lattice == WfstDecoder(graph).decode(log_probs)


def test_log_probs_of_the_wrong_width_are_refused(graph: Graph) -> None:
    with pytest.raises(ValueError, match=r"expected \[frames, 28\]"):
        WfstDecoder(graph).decode(np.zeros((5, 27), np.float32))


def test_greedy_ctc_collapses_repeats_and_drops_blanks(graph: Graph) -> None:
    log_probs = posteriors(["call", "one"])
    assert [TOKENS[t] for t in greedy_tokens(log_probs)] == list("callone")
    assert greedy_decode(log_probs, graph.tokens) == "callone"
    # with a word-boundary token the greedy text has words
    tokens = [*TOKENS, "|"]
    frames = [1, 1, 0, 28, 28, 2, 0, 2, 28]  # a a _ | | b _ b |
    with_boundary = np.log(np.eye(len(tokens), dtype=np.float32)[frames] * 0.9 + 0.1 / len(tokens))
    assert greedy_decode(with_boundary, tokens) == "a bb"
