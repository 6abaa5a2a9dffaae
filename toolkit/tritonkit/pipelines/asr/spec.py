"""The asr pipeline's section of a model spec: `asr: {graph: ...}` makes TLG.fst from tokens, a lexicon and one
language model.

The graph files (TLG.fst, words.txt, tokens.txt, lexicon.txt) land in every version folder of the model,
built by `tritonkit.pipelines.asr.graph` and cached under `.tritonkit/cache/asr_graph/`.
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from tritonkit.pipelines.asr.graph.info import GRAPH_FILES
from tritonkit.plugin.contract import Section
from tritonkit.spec.base import StrictModel

LM_FIELDS = ("arpa", "corpus", "grammar")


class AsrGraphSpec(StrictModel):
    """Inputs of the decoding graph; paths are relative to the spec (or `tritonkit:<path>`)."""

    tokens: str = Field(description="The acoustic model's token list, 'symbol id' lines, id 0 = CTC blank.")
    lexicon: str = Field(description="'word token token ...' lines; several lines give a word several pronunciations.")
    arpa: str | None = Field(default=None, description="An ARPA n-gram language model.")
    corpus: str | None = Field(default=None, description="Text, one sentence per line: a Kneser-Ney n-gram is "
                               "trained at build time.")
    grammar: str | None = Field(default=None, description="Allowed sentence patterns, e.g. 'call (zero|one|two)+'.")
    ngram_order: int = Field(default=3, ge=1, le=5, description="Order of the n-gram trained from `corpus`.")

    @model_validator(mode="after")
    def _one_language_model(self) -> AsrGraphSpec:
        given = [name for name in LM_FIELDS if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of arpa, corpus, grammar (got {', '.join(given) or 'none'})")
        return self

    @property
    def lm(self) -> tuple[Literal["arpa", "corpus", "grammar"], str]:
        """(kind, path as written) of the one language model."""
        for name in LM_FIELDS:
            value = getattr(self, name)
            if value is not None:
                return name, value  # type: ignore[return-value]
        raise AssertionError("validated: one language model is set")

    def named_paths(self) -> dict[str, str]:
        """{field: path as written} of every input file."""
        kind, path = self.lm
        return {"tokens": self.tokens, "lexicon": self.lexicon, kind: path}


class AsrSection(Section):
    """What the asr pipeline's build makes for a model (a CTC acoustic model's decoding graph)."""

    graph: AsrGraphSpec = Field(description="A decoding graph (TLG.fst, words.txt, tokens.txt, lexicon.txt) the build "
                                "makes and puts in each version folder.")

    def provides(self) -> tuple[str, ...]:
        return GRAPH_FILES

    def read_paths(self) -> dict[str, str]:
        return {f"graph.{field}": path for field, path in self.graph.named_paths().items()}
