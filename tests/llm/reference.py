"""Independent references: plain PyTorch greedy generation with the original models, no KV cache, no padding."""
from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def _tiny_model() -> Any:
    import torch

    from tritonkit.pipelines.llm.export.tiny import MAX_POSITIONS, VOCAB
    from tritonkit.pipelines.llm.export.tiny_gpt import TinyGPT

    torch.manual_seed(0)  # the seed tiny.make_decoder uses
    return TinyGPT(vocab=VOCAB, max_pos=MAX_POSITIONS).eval()


def tiny_greedy(prompt_ids: list[int], steps: int, stop_ids: frozenset[int] = frozenset()) -> list[int]:
    """tritonkit's TinyGPT, the whole sequence recomputed every step."""
    import torch

    model = _tiny_model()
    ids = list(prompt_ids)
    empty = torch.zeros(1, len(model.blocks), model.blocks[0].heads, 0, model.blocks[0].head_dim)
    with torch.no_grad():
        for _ in range(steps):
            token = int(torch.argmax(model(torch.tensor([ids]), empty, empty)["logits"][0, -1]))
            if token in stop_ids:
                break
            ids.append(token)
    return ids[len(prompt_ids):]
