"""Reads the token list and the lexicon, and numbers words and disambiguation symbols for L and G.

Everything is checked here, before any FST is built, so a typo in a lexicon is one line naming the file,
the line and the fix rather than an empty graph or a crash inside OpenFst.
"""
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from tritonkit.errors import TritonkitError, Where
from tritonkit.spec.loader import shown_path

EPS, DISAMBIG, BOS, EOS = "<eps>", "#0", "<s>", "</s>"


def _lines(path: Path) -> list[tuple[int, list[str]]]:
    """(1-based line number, fields) of every non-blank line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TritonkitError(shown_path(path), "", f"cannot be read as UTF-8 text ({exc.__class__.__name__})",
                             "point the spec at a readable text file") from None
    return [(n, line.split()) for n, line in enumerate(text.splitlines(), 1) if line.strip()]


def read_tokens(path: Path) -> list[str]:
    """Token symbols by id from "symbol id" lines; ids must be 0..V-1 and id 0 is the CTC blank."""
    shown = shown_path(path)
    by_id: dict[int, str] = {}
    for n, fields in _lines(path):
        if len(fields) != 2 or not fields[1].isdigit():
            raise TritonkitError(shown, f"line {n}", f"'{' '.join(fields)}' is not 'symbol id'",
                                 "write one token per line as '<symbol> <id>', e.g. '<blk> 0'")
        symbol, tid = fields[0], int(fields[1])
        if tid in by_id:
            raise TritonkitError(shown, f"line {n}", f"id {tid} is given to both '{by_id[tid]}' and '{symbol}'",
                                 "give every token its own id")
        if symbol in by_id.values():
            raise TritonkitError(shown, f"line {n}", f"token '{symbol}' is listed twice", "list each token once")
        by_id[tid] = symbol
    if sorted(by_id) != list(range(len(by_id))) or len(by_id) < 2:
        raise TritonkitError(shown, "ids", f"ids are {sorted(by_id)[:8]}..., not 0..V-1 with V >= 2",
                             "number the tokens 0, 1, 2, ... with the CTC blank as 0, like the acoustic model's output "
                             "columns")
    return [by_id[i] for i in range(len(by_id))]


@dataclass(frozen=True)
class Lexicon:
    """Pronunciations as token ids, the word table, and the disambiguation symbol each pronunciation needs."""

    tokens: list[str]
    prons: list[tuple[str, tuple[int, ...]]]  # (word, token ids) in file order
    words: list[str]  # words.txt order: <eps>, sorted words, #0, <s>, </s>

    @property
    def word_ids(self) -> dict[str, int]:
        return {w: i for i, w in enumerate(self.words)}

    def disambiguated(self) -> list[tuple[str, tuple[int, ...], int]]:
        """(word, token ids, k) where k > 0 means the pronunciation ends in #k (0: none needed).

        A pronunciation needs one when it is a prefix of another or shared by several words, as in
        Kaldi's add_lex_disambig: otherwise L ∘ G is not determinizable.
        """
        counts = Counter(p for _, p in self.prons)
        prefixes = {p[:i] for _, p in self.prons for i in range(1, len(p))}
        seen: Counter[tuple[int, ...]] = Counter()
        out = []
        for word, pron in self.prons:
            k = 0
            if counts[pron] > 1 or pron in prefixes:
                seen[pron] += 1
                k = seen[pron]
            out.append((word, pron, k))
        return out


def read_lexicon(path: Path, tokens: list[str], tokens_path: Path) -> Lexicon:
    """Reads "word t1 t2 ..." lines; every token must be a non-blank entry of the token list."""
    shown = shown_path(path)
    token_id = {t: i for i, t in enumerate(tokens)}
    prons: list[tuple[str, tuple[int, ...]]] = []
    listed = shown_path(tokens_path)
    for n, fields in _lines(path):
        word, spelled, at = fields[0], fields[1:], Where(shown, f"line {n}")
        if not spelled:
            raise TritonkitError.at(at, f"word '{word}' has no tokens",
                                    f"spell it with tokens from {listed}, e.g. '{word} {' '.join(word)}'")
        if word in (EPS, DISAMBIG, BOS, EOS) or word.startswith("#"):
            raise TritonkitError.at(at, f"'{word}' is a reserved symbol, not a word",
                                    "remove the line (<eps>, #k, <s> and </s> are added by the build)")
        unknown = [t for t in spelled if t not in token_id]
        if unknown:
            raise TritonkitError.at(at, f"word '{word}' uses token '{unknown[0]}', which is not in {listed}",
                                    f"add '{unknown[0]}' to the token list or spell '{word}' with listed tokens")
        if any(token_id[t] == 0 for t in spelled):
            raise TritonkitError.at(at, f"word '{word}' uses the blank token '{tokens[0]}'",
                                    "spell words with non-blank tokens only")
        prons.append((word, tuple(token_id[t] for t in spelled)))
    if not prons:
        raise TritonkitError(shown, "", "the lexicon has no words",
                             "write one 'word token token ...' line per pronunciation")
    words = [EPS, *sorted({w for w, _ in prons}), DISAMBIG, BOS, EOS]
    return Lexicon(tokens, prons, words)
