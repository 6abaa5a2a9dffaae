"""The tiny GPT of `tiny_gpt.py` as a KV-cache decoder, with a byte-level tokenizer of its own.

Random weights (seeded), 259 tokens: the 256 bytes plus `<|endoftext|>`, `<|im_start|>`, `<|im_end|>`. Its
output is arbitrary bytes, which is what the pipeline's tests want: fast steps, and plenty of incomplete or
invalid UTF-8 for the detokenizer to hold back. Entry point: `tritonkit.pipelines.llm.export.tiny:build`.
"""
import json
from pathlib import Path
from typing import Any

from tritonkit.pipelines.llm.export import chat_format, kv_graph

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
VOCAB = 256 + len(SPECIAL_TOKENS)
MAX_POSITIONS = 256
#: ChatML, as SmolLM2 uses it (the runtime formats chats from these strings, see runtime/chat.py).
CHAT = dict(chat_format.CHATML, default_system=None)


def make_decoder(seed: int = 0) -> Any:
    """TinyGPT(vocab=259) wrapped to the decoder contract of `kv_graph`."""
    import torch
    from torch import nn

    from tritonkit.pipelines.llm.export.tiny_gpt import TinyGPT

    torch.manual_seed(seed)
    gpt = TinyGPT(vocab=VOCAB, max_pos=MAX_POSITIONS).eval()

    blocks: list[Any] = list(gpt.blocks)
    attend = kv_graph.attention(blocks[0].heads, blocks[0].heads, blocks[0].head_dim)

    class TinyGPTDecoder(nn.Module):
        """Batched steps over TinyGPT's blocks (kv_graph's contract; positions from the cache lengths)."""

        def __init__(self) -> None:
            super().__init__()
            self.gpt = gpt

        def forward(self, input_ids, past_length, input_length, logit_index, **past_layers):
            """`past_layers`: past_key_<i> and past_value_<i> [B, H, C, D] (kv_graph's contract)."""
            lengths = kv_graph.Lengths(input_ids, past_layers["past_key_0"], past_length, input_length, logit_index)
            positions = torch.clamp(lengths.positions(), max=MAX_POSITIONS - 1)  # padding may run past
            x = self.gpt.tok(input_ids) + self.gpt.pos(positions)
            keys, values = [], []
            for i, block in enumerate(blocks):
                out, key, value = attend(block.qkv(block.ln1(x)), past_layers[f"past_key_{i}"],
                                         past_layers[f"past_value_{i}"], lengths)
                keys.append(key)
                values.append(value)
                x = x + block.proj(out)
                x = x + block.mlp(block.ln2(x))
            logits = self.gpt.ln_f(lengths.tails(x)) @ self.gpt.tok.weight.T
            return {"logits": logits, **dict(zip(kv_graph.present_names(len(blocks)), keys + values))}

    return TinyGPTDecoder().eval()


def geometry(decoder: Any) -> dict[str, int]:
    """layers, kv_heads, head_dim, vocab of a wrapped TinyGPT."""
    block = decoder.gpt.blocks[0]
    return {"layers": len(decoder.gpt.blocks), "kv_heads": block.heads, "head_dim": block.head_dim, "vocab": VOCAB}


def build(seed: int = 0, code: str = "") -> tuple[Any, dict[str, Any]]:
    """Entry point for the exporter: (decoder module, example inputs of a mixed prefill/decode batch).

    `code` is unused: the wrapper code's fingerprint, passed only to key the export cache (see prepare.py)."""
    decoder = make_decoder(seed)
    g = geometry(decoder)
    return decoder, kv_graph.example_inputs(g["vocab"], g["layers"], g["kv_heads"], g["head_dim"])


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character table used by byte-level BPE."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def make_tokenizer() -> Any:
    """A byte-level tokenizer with one token per byte (ids 0..255 = byte values) and 3 special tokens."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    vocab = {char: byte for byte, char in bytes_to_unicode().items()}
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS])
    return tokenizer


def write_assets(out_dir: Path) -> None:
    """tokenizer.json and generation.json for the runtime."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = make_tokenizer()
    tokenizer.save(str(out_dir / "tokenizer.json"))
    eos = [tokenizer.token_to_id("<|im_end|>"), tokenizer.token_to_id("<|endoftext|>")]
    generation = {"format": 1, "name": "tiny-gpt", "eos_token_ids": eos, "bos_token_id": None,
                  "max_context": MAX_POSITIONS, "chat": CHAT}
    (out_dir / "generation.json").write_text(json.dumps(generation, indent=2) + "\n")
