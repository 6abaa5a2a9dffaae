"""Text or a client's token ids -> the encoder's input ids, as the model's tokenizer.json makes them: its special
tokens around the text's, truncated at its max_length."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np


class Tokens:
    """The tokenizer, plus what it adds around a text (derived from it, not assumed to be BERT's [CLS]/[SEP])."""

    def __init__(self, tokenizer_file: str | Path) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        truncation = self.tokenizer.truncation
        self.max_length = int(truncation["max_length"]) if truncation else None
        self.vocab_size = self.tokenizer.get_vocab_size()
        plain = self.tokenizer.encode("a", add_special_tokens=False).ids
        full = self.tokenizer.encode("a").ids
        start = next(i for i in range(len(full)) if full[i:i + len(plain)] == plain)
        self.prefix, self.suffix = full[:start], full[start + len(plain):]

    def of_texts(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Each text's ids, special tokens added and truncated."""
        return [np.array(e.ids, dtype=np.int64) for e in self.tokenizer.encode_batch(list(texts))]

    def of_ids(self, ids: np.ndarray) -> np.ndarray:
        """A client's ids (the text's tokens, no special ones): checked against the vocabulary, truncated as a text
        would be, special tokens added; an id outside the vocabulary is a ValueError naming it."""
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        if ids.size == 0:
            raise ValueError("'input': token ids must not be empty")
        bad = ids[(ids < 0) | (ids >= self.vocab_size)]
        if bad.size:
            raise ValueError(f"'input': token id {int(bad[0])} is outside the vocabulary (0 to {self.vocab_size - 1})")
        room = None if self.max_length is None else self.max_length - len(self.prefix) - len(self.suffix)
        return np.concatenate([np.array(self.prefix, np.int64), ids[:room], np.array(self.suffix, np.int64)])


def padded(rows: Sequence[np.ndarray], pad_id: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ids as one [len(rows), longest] batch padded with PAD_ID, and each row's length [len(rows), 1]."""
    lengths = np.array([[len(r)] for r in rows], dtype=np.int32)
    batch = np.full((len(rows), int(lengths.max(initial=0))), pad_id, dtype=np.int64)
    for i, row in enumerate(rows):
        batch[i, :len(row)] = row
    return batch, lengths
