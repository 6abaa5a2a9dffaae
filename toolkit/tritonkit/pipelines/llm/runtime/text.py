"""Tokenizer access and incremental detokenization that never emits broken UTF-8 or part of a stop string.

The streamed text of a generation is defined as a pure function of its token ids (`visible_text`), so
`generate` computes each response's delta from the ids so far and stops on the same text: decode everything,
cut at the first stop string, and while the generation is still running hold back a trailing incomplete
character (decoded as U+FFFD) and any tail that could still grow into a stop string. Deltas of consecutive
steps then concatenate to the final text exactly.
"""
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

REPLACEMENT = "\ufffd"
Decode = Callable[[Sequence[int]], str]


def _byte_level_alphabet() -> dict[str, int]:
    """GPT-2's byte-level BPE: the character each byte is written as in the vocabulary, inverted."""
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    moved = [b for b in range(256) if b not in kept]
    return {chr(b): b for b in kept} | {chr(256 + i): b for i, b in enumerate(moved)}


_BYTE_OF = _byte_level_alphabet()


class TextCodec:
    """A `tokenizers.Tokenizer` loaded from tokenizer.json: encode prompts, decode generated ids."""

    def __init__(self, tokenizer_json: str | Path) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_json))
        self.vocab_size = self.tokenizer.get_vocab_size(with_added_tokens=True)
        decoder = json.loads(self.tokenizer.to_str()).get("decoder") or {}
        self.byte_level = decoder.get("type") == "ByteLevel"

    def encode(self, text: str, add_special_tokens: bool = True) -> np.ndarray:
        """int64 token ids of `text` (special tokens written in the text, e.g. `<|im_start|>`, become their ids)."""
        return np.asarray(self.tokenizer.encode(text, add_special_tokens=add_special_tokens).ids, dtype=np.int64)

    def token_bytes(self, token: int) -> bytes:
        """The bytes one token stands for: a byte-level BPE token may hold part of a UTF-8 character, so its text
        alone cannot say (OpenAI's log probabilities give both)."""
        piece = self.tokenizer.id_to_token(int(token)) or ""
        if self.byte_level and all(c in _BYTE_OF for c in piece):
            return bytes(_BYTE_OF[c] for c in piece)
        return piece.encode("utf-8")

    def decode(self, ids: Sequence[int]) -> str:
        """Text of `ids` with special tokens left out; invalid or incomplete UTF-8 becomes U+FFFD."""
        return self.tokenizer.decode([int(i) for i in ids], skip_special_tokens=True)


def find_stop(text: str, stop: Sequence[str]) -> int:
    """Index of the earliest stop string in `text`, -1 when none occurs."""
    hits = [i for i in (text.find(s) for s in stop) if i >= 0]
    return min(hits) if hits else -1


def held_tail(text: str, stop: Sequence[str]) -> int:
    """Length of the longest suffix of `text` that is a proper prefix of some stop string."""
    longest = 0
    for s in stop:
        for n in range(min(len(s) - 1, len(text)), longest, -1):
            if text.endswith(s[:n]):
                longest = n
                break
    return longest


def visible_text(decode: Decode, ids: Sequence[int], stop: Sequence[str] = (), final: bool = False) -> tuple[str, bool]:
    """(text a client may have seen after `ids`, whether a stop string ended it).

    A final text keeps trailing U+FFFD (the bytes will never complete); a running one holds them back.
    """
    text = decode(ids) if len(ids) else ""
    cut = find_stop(text, stop)
    if cut >= 0:
        return text[:cut], True
    if final:
        return text, False
    end = len(text)
    while end and text[end - 1] == REPLACEMENT:
        end -= 1
    text = text[:end]
    return text[:len(text) - held_tail(text, stop)], False


def text_delta(decode: Decode, ids: Sequence[int], new: int, stop: Sequence[str] = (), final: bool = False) -> str:
    """The text to stream for the response that added the last `new` of `ids`."""
    before, _ = visible_text(decode, ids[:len(ids) - new], stop, final=False)
    after, _ = visible_text(decode, ids, stop, final)
    if after.startswith(before):
        return after[len(before):]
    common = 0  # a decoder that rewrites earlier text (e.g. space clean-up): send what differs after the shared part
    for a, b in zip(before, after):
        if a != b:
            break
        common += 1
    return after[common:]
