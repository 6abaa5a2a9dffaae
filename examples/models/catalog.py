"""How each example model is declared in a spec: its `source:`, `export:` and `max_batch_size`.

One place shared by the tests, the export benchmark and the TensorRT check script; a spec file says
the same in YAML, e.g. for tiny_gpt:

    source: {python: examples.models.tiny_gpt:build}
    export: {dynamic_axes: {input_ids: {1: seq}, past_key: {3: past}, past_value: {3: past}}}
"""
from __future__ import annotations

from typing import Any

EXAMPLES: dict[str, dict[str, Any]] = {
    "mlp": {"source": {"python": "examples.models.mlp:build"}, "export": {}, "max_batch_size": 8},
    "tiny_gpt": {
        "source": {"python": "examples.models.tiny_gpt:build"},
        "export": {"dynamic_axes": {"input_ids": {1: "seq"}, "past_key": {3: "past"}, "past_value": {3: "past"}}},
        "max_batch_size": 4,
    },
    "ctc_acoustic": {
        "source": {"python": "examples.models.ctc_acoustic:build"},
        "export": {"exporter": "torchscript", "output_names": ["log_probs"],
                   "dynamic_axes": {"features": {1: "frames"}}},
        "max_batch_size": 4,
    },
    "transformer_encoder": {
        "source": {"python": "examples.models.transformer_encoder:build"},
        "export": {"dynamic_axes": {"input_ids": {1: "seq"}, "attention_mask": {1: "seq"}}},
        "max_batch_size": 4,
    },
    "minilm": {
        "source": {"python": "examples.models.minilm:build"},
        "export": {"dynamic_axes": {"input_ids": {1: "seq"}, "attention_mask": {1: "seq"}},
                   "verify": {"lengths": {"seq": [16]}}},
        "max_batch_size": 8,
    },
}
#: A model whose export must fail verification (see wrong_branch.py).
WRONG_BRANCH: dict[str, Any] = {"source": {"python": "examples.models.wrong_branch:build"}, "export": {},
                                "max_batch_size": 4}
