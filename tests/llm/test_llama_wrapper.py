"""The Llama wrapper (export/llama.py) on a small random Llama: the exported graph is the lean one (fused q/k/v and
gate/up projections, attention, rotary and the residual norms as single ops) and still decodes exactly like
transformers, in PyTorch and through onnxruntime. SmolLM2 itself is checked served in test_smollm2.py (slow)."""
from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import numpy as np

from tests.conftest import missing

if importlib.util.find_spec("transformers") is None:
    missing("needs: pip install 'tritonkit[llm]'")

LAYERS, HEADS, KV_HEADS, HEAD_DIM, VOCAB = 2, 6, 2, 16, 97


def _hf_model():
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=HEADS * HEAD_DIM, intermediate_size=160,
                         num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=KV_HEADS,
                         max_position_embeddings=64, tie_word_embeddings=True)
    return LlamaForCausalLM(config).eval()


def _greedy(step, prompt: list[int], tokens: int) -> list[int]:
    """Prefill then decode one token at a time through a decoder-contract callable (batch 1, no padding)."""
    past_key = past_value = np.zeros((1, LAYERS, KV_HEADS, 0, HEAD_DIM), np.float32)
    ids, out = prompt, []
    for _ in range(tokens):
        logits, new_key, new_value = step(np.array([ids], np.int64), past_key, past_value,
                                          np.array([[past_key.shape[3]]], np.int64), np.array([[len(ids)]], np.int64))
        assert new_key.shape[3] == len(ids)  # the new entries only: the caller keeps the cache
        past_key, past_value = np.concatenate([past_key, new_key], 3), np.concatenate([past_value, new_value], 3)
        ids = [int(np.argmax(logits[0]))]
        out += ids
    return out


def test_the_exported_graph_is_lean_and_decodes_like_transformers(tmp_path: Path) -> None:
    import onnx
    import onnxruntime as ort
    import torch

    from tritonkit.errors import NOWHERE
    from tritonkit.export.pipeline import dynamic_axes
    from tritonkit.export.torch2onnx import export
    from tritonkit.pipelines.llm.export import kv_graph, llama

    hf = _hf_model()
    decoder = llama.make_decoder(hf)
    prompt = [5, 17, 42, 8, 77, 3]
    with torch.no_grad():
        expected = hf.generate(torch.tensor([prompt]), max_new_tokens=8, do_sample=False, min_new_tokens=8)
    expected_ids = expected[0, len(prompt):].tolist()

    def feeds(ids, past_key, past_value, past_length, input_length) -> dict:
        """The graph's inputs from a stacked past [B, L, H, P, D]."""
        return {"input_ids": ids, **kv_graph.per_layer(past_key, past_value), "past_length": past_length,
                "input_length": input_length}

    def torch_step(*arrays):
        with torch.no_grad():
            out = decoder(**{n: torch.from_numpy(np.ascontiguousarray(a)) for n, a in feeds(*arrays).items()})
        return out["logits"].numpy(), out["present_key"].numpy(), out["present_value"].numpy()

    assert _greedy(torch_step, prompt, 8) == expected_ids

    example = kv_graph.example_inputs(VOCAB, LAYERS, KV_HEADS, HEAD_DIM)
    names = list(example)
    ranks = {n: t.dim() for n, t in example.items()} | {"logits": 2, "present_key": 5, "present_value": 5}
    axes = dynamic_axes(ranks, names, kv_graph.DYNAMIC_AXES, 1, NOWHERE)  # as the exporter names them

    class Outputs(torch.nn.Module):  # the exporter's adapter turns the dict into the named outputs the same way
        def __init__(self) -> None:
            super().__init__()
            self.decoder = decoder

        def forward(self, *args):
            out = self.decoder(**dict(zip(names, args)))
            return out["logits"], out["present_key"], out["present_value"]

    [path] = export("torchscript", Outputs(), tuple(example.values()), names, kv_graph.OUTPUT_NAMES, axes, 18,
                    tmp_path, "auto")
    nodes = onnx.load(str(path)).graph.node
    ops = Counter(node.op_type for node in nodes)
    # a layer: one MatMul each for q/k/v, o, gate/up, down (7 before), attention and rotary as one op each (ONNX
    # opset 23), the residual Add and the next RMSNorm as one; + the tied head
    assert ops["MatMul"] == 4 * LAYERS + 1, ops
    assert (ops["Attention"], ops["RotaryEmbedding"]) == (LAYERS, 2 * LAYERS), ops
    assert ops["SkipSimplifiedLayerNormalization"] == 2 * LAYERS - 1, ops
    assert ops["Tile"] + ops["Expand"] + ops["Softmax"] == 0, ops  # no repeat of the cache, no loose attention
    # the past concatenated ahead of Attention, which then has no present outputs to keep to the call's end
    assert [len(n.output) for n in nodes if n.op_type == "Attention"] == [1] * LAYERS

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])

    def onnx_step(*arrays):
        named = {n: np.ascontiguousarray(a) for n, a in feeds(*arrays).items()}
        return tuple(session.run(kv_graph.OUTPUT_NAMES, named))

    assert _greedy(onnx_step, prompt, 8) == expected_ids
    # a padded mixed batch (pasts right-padded, new tokens left-padded) gives each row the logits it gets alone
    stacked = [np.stack([example[f"past_{kind}_{i}"].numpy() for i in range(LAYERS)], 1) for kind in ("key", "value")]
    logits, _, _ = onnx_step(example["input_ids"].numpy(), *stacked, example["past_length"].numpy(),
                             example["input_length"].numpy())
    for row in range(logits.shape[0]):
        p, n = int(example["past_length"][row, 0]), int(example["input_length"][row, 0])
        alone = onnx_step(example["input_ids"][row:row + 1, -n:].numpy(), stacked[0][row:row + 1, :, :, :p],
                          stacked[1][row:row + 1, :, :, :p], np.array([[p]], np.int64),
                          np.array([[n]], np.int64))[0]
        np.testing.assert_allclose(logits[row], alone[0], atol=1e-4)
