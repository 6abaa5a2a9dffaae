"""Incremental detokenization: deltas never split a UTF-8 character or show any part of a stop string, and
always add up to the final text. Checked on the tiny GPT's byte-level tokenizer (one token per byte)."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tritonkit.pipelines.llm.export.tiny import make_tokenizer
from tritonkit.pipelines.llm.runtime.chat import format_chat
from tritonkit.pipelines.llm.runtime.text import (
    REPLACEMENT,
    TextCodec,
    held_tail,
    text_delta,
    visible_text,
)


@pytest.fixture(scope="module")
def codec(tmp_path_factory: pytest.TempPathFactory) -> TextCodec:
    path = Path(tmp_path_factory.mktemp("tok")) / "tokenizer.json"
    make_tokenizer().save(str(path))
    return TextCodec(path)


def stream(codec: TextCodec, ids: list[int], stop: tuple[str, ...] = (), final_at: int | None = None) -> list[str]:
    """Deltas as generate computes them, one token per response, the last one final."""
    end = len(ids) if final_at is None else final_at
    return [text_delta(codec.decode, ids[:n], 1, stop, final=n == end) for n in range(1, end + 1)]


def test_byte_tokens_round_trip(codec):
    ids = codec.encode("héllo ✓")
    assert list(ids) == list("héllo ✓".encode())
    assert codec.decode(ids) == "héllo ✓"


def test_multibyte_character_is_held_until_complete(codec):
    ids = list("a✓b".encode())  # ✓ is 3 bytes
    deltas = stream(codec, ids)
    assert deltas == ["a", "", "", "✓", "b"]
    assert all(REPLACEMENT not in d for d in deltas)


def test_bytes_that_never_complete_are_flushed_as_replacement_at_the_end(codec):
    ids = [ord("a"), 0xE2, 0x9C]  # the stream ends inside a character
    deltas = stream(codec, ids)
    assert deltas[:2] == ["a", ""]
    assert deltas[-1].startswith(REPLACEMENT)
    assert "".join(deltas) == codec.decode(ids)


def test_invalid_byte_followed_by_text_is_emitted_once_known_invalid(codec):
    deltas = stream(codec, [0xFF, ord("x"), ord("y")])
    assert "".join(deltas) == REPLACEMENT + "xy"
    assert deltas[0] == ""  # a trailing U+FFFD is held: it might still be the start of a character


def test_stop_string_is_cut_and_never_shown(codec):
    ids = list(b"one\n\nUser: two")
    full, stopped = visible_text(codec.decode, ids, ("\n\nUser:",), final=True)
    assert (full, stopped) == ("one", True)
    deltas = stream(codec, ids[:ids.index(ord(":")) + 1], ("\n\nUser:",))
    assert "".join(deltas) == "one"
    assert all("\n" not in d for d in deltas)  # the held "\n\nUser" prefix was never streamed


def test_held_prefix_is_released_when_the_stop_string_does_not_follow(codec):
    deltas = stream(codec, list(b"a\nb"), ("\n\n",))
    assert deltas == ["a", "", "\nb"]


def test_held_tail_is_the_longest_stop_prefix():
    assert held_tail("abc<|im", ("<|im_end|>", "c<")) == 4
    assert held_tail("abc", ("xyz",)) == 0
    assert held_tail("ab", ("ab",)) == 0  # a whole stop string is a match, not a held prefix


def test_chat_format_chatml():
    chat = {"message": "<|im_start|>{role}\n{content}<|im_end|>\n", "generation_prompt": "<|im_start|>assistant\n",
            "default_system": "Be nice"}
    text = format_chat(chat, [{"role": "user", "content": "hi {role}"}])
    assert text == ("<|im_start|>system\nBe nice<|im_end|>\n<|im_start|>user\nhi "
                    "{role}<|im_end|>\n<|im_start|>assistant\n")
    with pytest.raises(ValueError, match="role"):
        format_chat(chat, [{"role": "robot", "content": "x"}])


@settings(max_examples=300, deadline=None)
@given(ids=st.lists(st.one_of(st.integers(0, 255), st.sampled_from([0xE2, 0x9C, 0x93, 0xC3, 0xA9, 0xF0, 0x9F])),
                    min_size=1, max_size=24),
       stop=st.lists(st.text(alphabet="ab\n✓é", min_size=1, max_size=3), max_size=2))
def test_deltas_always_add_up_to_the_final_text(codec, ids, stop):
    stop = tuple(stop)
    deltas = stream(codec, ids, stop)
    final, _ = visible_text(codec.decode, ids, stop, final=True)
    assert "".join(deltas) == final
    for n in range(1, len(ids)):  # a running stream never shows a replacement the final text lacks there
        shown = "".join(deltas[:n])
        assert final.startswith(shown)
        for s in stop:
            assert s not in shown
