"""G from a grammar: one allowed sentence pattern per line, for closed-vocabulary command recognition.

A pattern is a sequence of items; an item is a word or a choice `(one|two|three)`, and a trailing `+` repeats the item
one or more times, e.g. `call (zero|one|two)+` or `volume (up|down)`. Lines starting with `#` are comments. Every word
must be in the lexicon: an out-of-vocabulary word is a one-line error, because it could never be recognized.
"""
import re
from pathlib import Path

import kaldifst

from tritonkit.errors import TritonkitError
from tritonkit.pipelines.asr.graph.fsts import compile_text
from tritonkit.pipelines.asr.graph.lexicon import Lexicon
from tritonkit.spec.loader import shown_path

_ITEM = re.compile(r"\(([^()\s]+)\)(\+?)|([^()\s+|]+)(\+?)")

#: One slot of a pattern: the words allowed there, and whether it repeats.
Slot = tuple[list[str], bool]


def parse_pattern(text: str) -> list[Slot] | None:
    """The slots of one pattern line, or None when the line is not a pattern."""
    slots: list[Slot] = []
    for item in text.split():
        match = _ITEM.fullmatch(item)
        if not match:
            return None
        choice, choice_rep, word, word_rep = match.groups()
        words = choice.split("|") if choice else [word]
        if any(not w for w in words):
            return None
        slots.append((words, bool(choice_rep or word_rep)))
    return slots


def read_grammar(path: Path, lexicon: Lexicon) -> list[list[Slot]]:
    """Every pattern of the file, checked against the lexicon."""
    shown = shown_path(path)
    known = set(lexicon.word_ids)
    patterns = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        slots = parse_pattern(line)
        if slots is None:
            raise TritonkitError(shown, f"line {n}", f"'{line.strip()}' is not a pattern",
                                 "write words and choices like 'call (zero|one)+ now'")
        oov = next((w for words, _ in slots for w in words if w not in known or w.startswith(("#", "<"))), None)
        if oov is not None:
            raise TritonkitError(shown, f"line {n}", f"word '{oov}' is not in the lexicon",
                                 f"add a pronunciation for '{oov}' to the lexicon or remove it from the grammar")
        patterns.append(slots)
    if not patterns:
        raise TritonkitError(shown, "", "the grammar has no patterns", "write one allowed sentence pattern per line")
    return patterns


def grammar_fst(patterns: list[list[Slot]], lexicon: Lexicon) -> kaldifst.StdVectorFst:
    """G as a word acceptor (weights 0): a chain of states per pattern from one start, determinized and minimized."""
    word_id = lexicon.word_ids
    lines: list[str] = []
    finals: list[int] = []
    next_state = 1
    for slots in patterns:
        src = 0
        for words, repeat in slots:
            dst = next_state
            next_state += 1
            lines += [f"{src} {dst} {word_id[w]} {word_id[w]}" for w in words]
            if repeat:
                lines += [f"{dst} {dst} {word_id[w]} {word_id[w]}" for w in words]
            src = dst
        finals.append(src)
    g = compile_text(lines + [str(s) for s in sorted(set(finals))])
    g = kaldifst.determinize(g)
    kaldifst.minimize(g)
    return g
