"""What a graph build reports and writes; free of kaldifst, so the build imports it for any project."""
from dataclasses import asdict, dataclass
from typing import Literal

#: What a graph folder holds; the decoder's version folder gets all of them.
GRAPH_FILES = ("TLG.fst", "words.txt", "tokens.txt", "lexicon.txt")

LmKind = Literal["arpa", "corpus", "grammar"]


@dataclass(frozen=True)
class GraphInfo:
    """Sizes and provenance of one built graph, reported by `tritonkit build`."""

    states: int
    arcs: int
    lg_states: int
    lg_arcs: int
    words: int
    tokens: int
    lm: LmKind
    skipped_ngrams: int  # ARPA n-grams dropped because a word has no pronunciation
    seconds: float

    def to_dict(self) -> dict[str, object]:
        return asdict(self)
