"""The decoder graph's contract, shared by every wrapped model: batched steps over padded KV caches.

Inputs (B rows, S new tokens, P cached positions, L layers, H kv heads, D head size):
- `input_ids` int64 [B, S]: new tokens, left-padded (row r's tokens are the last `input_length[r]`);
- `past_key_<i>`, `past_value_<i>` float32 [B, H, P, D], one pair per layer i: cached keys/values, right-padded
  (row r's are the first `past_length[r]` positions, the padding finite), so that a request's own cache, its
  unfilled positions zero, is a past as it is (the engine binds one row's cache in place);
- `past_length`, `input_length` int64 [B, 1]: how many of those positions are real.
Outputs: `logits` float32 [B, V] at each row's last (newest) token, and `present_key`/`present_value`
[B, L, H, S, D]: the new tokens' keys/values only, left-padded like `input_ids` (row r's are the last
`input_length[r]`). The caller keeps the cache: a graph that returned past and new concatenated copied every
row's whole cache out each step (SmolLM2, 8 rows of 200 positions: a call took 1.31x as long). The past comes
per layer because onnxruntime has no view of a slice: a stacked [B, L, H, P, D] input was split into a copy of
every layer's part at the start of each call, a second copy of the whole past (SmolLM2 int4, 8 rows of 70
positions: 26 MB a call, 27.2 against 26.0 ms; one row of 40: 8.6 against 8.2 ms).

Padding is masked out of attention and positions are `past_length + k` for the k-th real new token, so rows
of different lengths (prefill and decode alike) share one call and give the same logits as alone.
"""
from typing import Any

OUTPUT_NAMES = ["logits", "present_key", "present_value"]
#: Export options for the tritonkit exporter (the batch axis is added by max_batch_size > 0).
DYNAMIC_AXES = {"input_ids": {1: "seq"}, "past_key_*": {2: "past"}, "past_value_*": {2: "past"}}
#: Large negative score for masked keys: finite, so a fully padded query row stays finite (no NaN leaks).
MASKED = -1e9


def past_names(layers: int) -> list[str]:
    """The per-layer past inputs: every layer's keys, then every layer's values."""
    return [f"past_key_{i}" for i in range(layers)] + [f"past_value_{i}" for i in range(layers)]


def per_layer(past_key: Any, past_value: Any) -> dict[str, Any]:
    """{past_key_<i>, past_value_<i>} from stacked [B, L, H, P, D] keys and values (numpy or torch)."""
    layers = past_key.shape[1]
    return dict(zip(past_names(layers), [past_key[:, i] for i in range(layers)]
                    + [past_value[:, i] for i in range(layers)]))


def positions_and_mask(seq: int, past: int, past_length: Any, input_length: Any) -> tuple[Any, Any]:
    """(position ids [B, S], boolean attention mask [B, 1, S, P + S]) for a right-padded past and left-padded new
    tokens."""
    import torch

    new_index = torch.arange(seq, device=past_length.device)[None, :]
    pad_new = seq - input_length  # [B, 1]
    positions = (past_length + new_index - pad_new).clamp(min=0)
    key_index = torch.arange(past + seq, device=past_length.device)[None, :]
    past_valid = key_index < past_length  # past_length <= past: never a new position
    new_valid = key_index >= past + pad_new
    key_valid = past_valid | new_valid  # [B, P + S]
    causal = key_index[:, None, :] <= (past + new_index)[:, :, None]  # [1, S, P + S]
    mask = key_valid[:, None, :] & causal
    return positions, mask[:, None, :, :]


def example_inputs(vocab: int, layers: int, kv_heads: int, head_dim: int, *, batch: int = 2, seq: int = 5,
                   past: int = 7, seed: int = 0) -> dict[str, Any]:
    """A mixed batch for export and verification: row 0 decodes with a full cache, row 1 prefills shorter."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    shape = (batch, layers, kv_heads, past, head_dim)
    past_length = torch.tensor([[past - (r % 3)] for r in range(batch)], dtype=torch.int64)
    input_length = torch.tensor([[seq - (r % 2) * 2] for r in range(batch)], dtype=torch.int64)
    return {"input_ids": torch.randint(0, vocab, (batch, seq), generator=gen),
            **{name: t.contiguous() for name, t in per_layer(torch.randn(shape, generator=gen),
                                                              torch.randn(shape, generator=gen)).items()},
            "past_length": past_length, "input_length": input_length}


def export_options(atol: float = 1e-4, rtol: float = 1e-4, lengths: dict[str, list[int]] | None = None,
                   batch_sizes: list[int] | None = None, golden: int = 4, exporter: str = "torchscript",
                   outputs: dict[str, dict[str, float]] | None = None) -> dict[str, Any]:
    """The `export:` section for a decoder with this contract.

    The TorchScript exporter is the default: it traces a 30-layer decoder in ~20 s where torch.export takes
    minutes, and verification at other batch sizes and lengths shows the trace kept every dim dynamic.
    """
    verify: dict[str, Any] = {"golden_samples": golden, "lengths": lengths or {"seq": [1, 9], "past": [1, 12]}}
    if batch_sizes is not None:
        verify["batch_sizes"] = batch_sizes
    return {"exporter": exporter, "output_names": OUTPUT_NAMES, "dynamic_axes": DYNAMIC_AXES,
            "tolerance": {"atol": atol, "rtol": rtol, "outputs": outputs or {}}, "verify": verify}
