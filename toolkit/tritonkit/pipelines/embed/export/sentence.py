"""What a sentence-transformers model folder says about its pipeline: modules.json, the pooling module's config,
whether a Normalize module follows, and the longest input (sentence_bert_config.json)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

MODULE = "sentence_transformers.models."
#: Pooling modes in the order sentence-transformers concatenates them, by their config key.
POOLING_MODES = {"pooling_mode_cls_token": "cls", "pooling_mode_max_tokens": "max",
                 "pooling_mode_mean_tokens": "mean", "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len"}


@dataclass(frozen=True)
class SentenceConfig:
    """The parts of a sentence-transformers pipeline the exported encoder reproduces."""

    poolings: tuple[str, ...]   # POOLING_MODES' values, concatenated in this order
    normalize: bool             # a Normalize module follows the pooling (unit-length vectors)
    max_seq_length: int         # tokens, special ones included; longer inputs are truncated

    @classmethod
    def read(cls, folder: str | Path) -> SentenceConfig:
        """Reads FOLDER's configuration; a module this pipeline cannot reproduce is a ValueError naming it."""
        root = Path(folder)
        modules = json.loads((root / "modules.json").read_text())
        kinds = [m["type"].removeprefix(MODULE) for m in modules]
        if kinds[:2] != ["Transformer", "Pooling"] or not set(kinds[2:]) <= {"Normalize"}:
            raise ValueError(f"{root / 'modules.json'}: modules {kinds} are not Transformer, Pooling[, Normalize], "
                             "the pipeline this encoder reproduces")
        pooling = json.loads((root / modules[1]["path"] / "config.json").read_text())
        unknown = sorted(k for k, on in pooling.items()
                         if k.startswith("pooling_mode") and on and k not in POOLING_MODES)
        poolings = tuple(mode for key, mode in POOLING_MODES.items() if pooling.get(key))
        if unknown or not poolings:
            raise ValueError(f"{root / modules[1]['path'] / 'config.json'}: pooling {unknown or 'none'} is not one "
                             f"of {sorted(POOLING_MODES)}")
        bert = json.loads((root / "sentence_bert_config.json").read_text())
        return cls(poolings, "Normalize" in kinds, int(bert["max_seq_length"]))
