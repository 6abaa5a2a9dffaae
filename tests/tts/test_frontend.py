"""Frontend: sentences, espeak-ng phonemes in Kokoro's symbols, unknown symbols reported, empty and long input."""
from __future__ import annotations

import time

import pytest

from tests.tts.conftest import espeak_or_skip
from tritonkit.pipelines.tts.frontend import MAX_TOKENS, Frontend, FrontendError, SymbolTable
from tritonkit.pipelines.tts.frontend.chunks import chunk_phonemes
from tritonkit.pipelines.tts.frontend.sentences import split_sentences


@pytest.mark.parametrize("text, sentences", [
    ("One. Two! Three? Four", ["One.", "Two!", "Three?", "Four"]),
    ('He said "stop." Then left…  And came back.', ['He said "stop."', "Then left…", "And came back."]),
    ("Line one\nline two\n\nline three.", ["Line one", "line two", "line three."]),
    ("Wait... what?! ...", ["Wait...", "what?!..."]),
    ("three point one four is pi.", ["three point one four is pi."]),
])
def test_split_sentences(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences


def test_sentences_are_split_after_normalization_so_abbreviations_and_decimals_do_not_split() -> None:
    frontend = Frontend(SymbolTable({"a": 1}), espeak_or_skip())
    assert frontend.sentences("Dr. Smith paid $3.50 at 10:30 a.m. He left.") == [
        "Doctor Smith paid three dollars and fifty cents at ten thirty a m.", "He left."]


def test_phonemes_use_kokoro_symbols_and_keep_clause_punctuation(frontend: Frontend) -> None:
    phonemes = frontend.phonemes("Hi, I joined the chat. Right?")
    assert phonemes.count(",") == 1 and phonemes.count(".") == 1 and phonemes.endswith("?")
    assert "I" in phonemes and "ʤ" in phonemes and "ʧ" in phonemes   # a͡ɪ, d͡ʒ, t͡ʃ as Kokoro's single symbols
    assert "\u0361" not in phonemes
    encoded = frontend.symbols.encode(phonemes)
    assert not encoded.unknown and len(encoded.ids) == len(phonemes)


def test_unknown_symbols_are_reported_with_counts() -> None:
    """A table without ʃ: 'she sells shells' has two ʃ, reported, and every other symbol encoded."""
    espeak = espeak_or_skip()
    ipa = SymbolTable({}).kokoro_phonemes(espeak.ipa("she sells shells"))
    vocab = {s: i + 1 for i, s in enumerate(sorted(set(ipa) - {"ʃ"}))}
    result = Frontend(SymbolTable(vocab), espeak)("She sells shells.")
    assert result.unknown == {"ʃ": 2, ".": 1}
    (segment,) = result.segments
    assert len(segment.ids) == len(segment.phonemes) - 3


def test_unknown_symbols_of_the_real_table_are_reported(frontend: Frontend) -> None:
    """espeak-ng says the Welsh ll of Llanelli as ɬ, which Kokoro's table lacks."""
    result = frontend("We drove to Llanelli.")
    assert result.unknown == {"ɬ": 1}
    assert "ɬ" in result.segments[0].phonemes


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_input_is_a_clear_error(text: str) -> None:
    frontend = Frontend(SymbolTable({"a": 1}), espeak_or_skip())
    with pytest.raises(FrontendError, match="text is empty; send at least one word"):
        frontend(text)


def test_input_without_anything_to_say_is_a_clear_error(frontend: Frontend) -> None:
    with pytest.raises(FrontendError, match="has nothing to speak"):
        frontend("... !!! ???")


def test_very_long_input_is_chunked_to_the_model_context(frontend: Frontend) -> None:
    """A 400-word sentence without punctuation and a long paragraph: every segment fits, nothing is lost."""
    words = " ".join(["information"] * 400)
    text = f"{words}. Short one. " + "Tokens, many tokens, and more tokens; " * 60 + "the end."
    result = frontend(text)
    assert all(0 < len(s.ids) <= MAX_TOKENS for s in result.segments)
    first = [s for s in result.segments if s.sentence == 0]
    assert len(first) >= 2 and sum(s.phonemes.count("ˈ") for s in first) == 400  # one stressed syllable per word
    assert [s.sentence for s in result.segments] == sorted(s.sentence for s in result.segments)
    assert len(result.sentences) == 3 and not result.unknown
    last = [s for s in result.segments if s.sentence == 2]
    assert len(last) >= 2 and all(s.phonemes.endswith((",", ";", ".")) for s in last)  # cut at clause ends


@pytest.mark.parametrize("phonemes, limit, pieces", [
    ("ab, cd ef", 5, ["ab,", "cd ef"]),
    ("ab cd ef", 5, ["ab cd", "ef"]),
    ("abcdefgh", 3, ["abc", "def", "gh"]),
    ("short", 510, ["short"]),
])
def test_chunk_phonemes(phonemes: str, limit: int, pieces: list[str]) -> None:
    assert chunk_phonemes(phonemes, limit) == pieces


def test_phonemization_is_fast_enough_for_streaming(frontend: Frontend) -> None:
    sentence = "Triton serves speech at twenty-four kilohertz, sentence by sentence, as soon as each one is ready."
    start = time.perf_counter()
    for _ in range(20):
        frontend.segments(sentence)
    assert (time.perf_counter() - start) / 20 < 0.02   # measured ~0.1 ms; a subprocess per sentence costs ~9 ms


def test_a_piece_of_only_underscores_joins_the_sentence_before_it() -> None:
    """An underscore is no letter or digit: a sentence of it alone has nothing to speak, so streaming (one frontend
    call per sentence) would fail where the whole utterance succeeds."""
    assert split_sentences("Hello. _\nBye.") == ["Hello._", "Bye."]
