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


def _greedy(step, prompt: list[int], tokens: int, capacity: int = 24) -> list[int]:
    """Prefill then decode one token at a time through a decoder-contract callable (batch 1, no padding): each
    call's present outputs are the cache the next call reads."""
    from tritonkit.pipelines.llm.export import kv_graph

    cache = [np.zeros((1, KV_HEADS, capacity, HEAD_DIM), np.float32) for _ in kv_graph.past_names(LAYERS)]
    ids, out, length = prompt, [], 0
    for _ in range(tokens):
        logits, *cache = step(np.array([ids], np.int64), cache, np.array([[length]], np.int64),
                              np.array([[len(ids)]], np.int64))
        length += len(ids)
        assert not np.any(cache[0][:, :, length:])  # nothing written past the new entries
        ids = [int(np.argmax(logits[0, -1]))]
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
    past_names, output_names = kv_graph.past_names(LAYERS), ["logits", *kv_graph.present_names(LAYERS)]

    def feeds(ids, pasts, past_length, input_length) -> dict:
        return {"input_ids": ids, **dict(zip(past_names, pasts)), "past_length": past_length,
                "input_length": input_length, "logit_index": input_length - 1}   # each row's last token

    def torch_step(*arrays):
        with torch.no_grad():
            out = decoder(**{n: torch.from_numpy(np.ascontiguousarray(a)) for n, a in feeds(*arrays).items()})
        return [out[name].numpy() for name in output_names]

    assert _greedy(torch_step, prompt, 8) == expected_ids

    example = kv_graph.example_inputs(VOCAB, LAYERS, KV_HEADS, HEAD_DIM)
    names = list(example)
    ranks = {n: t.dim() for n, t in example.items()} | {n: 4 for n in output_names} | {"logits": 3}
    axes = dynamic_axes(ranks, names, kv_graph.DYNAMIC_AXES, 1, NOWHERE)  # as the exporter names them

    class Outputs(torch.nn.Module):  # the exporter's adapter turns the dict into the named outputs the same way
        def __init__(self) -> None:
            super().__init__()
            self.decoder = decoder

        def forward(self, *args):
            out = self.decoder(**dict(zip(names, args)))
            return tuple(out[name] for name in output_names)

    [path] = export("torchscript", Outputs(), tuple(example.values()), names, output_names, axes, 18, tmp_path, "auto")
    nodes = onnx.load(str(path)).graph.node
    ops = Counter(node.op_type for node in nodes)
    # a layer: one MatMul each for q/k/v, o, gate/up, down (7 before), attention with its rotary embeddings as one
    # GroupQueryAttention, the residual Add and the next RMSNorm as one; + the tied head
    assert ops["MatMul"] == 4 * LAYERS + 1, ops
    assert ops["GroupQueryAttention"] == LAYERS, ops
    assert ops["SkipSimplifiedLayerNormalization"] == 2 * LAYERS - 1, ops
    assert ops["Softmax"] + ops["Attention"] + ops["RotaryEmbedding"] == 0, ops

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])

    def onnx_step(*arrays):
        named = {n: np.ascontiguousarray(a) for n, a in feeds(*arrays).items()}
        return session.run(output_names, named)

    assert _greedy(onnx_step, prompt, 8) == expected_ids
    # a mixed batch (new tokens right-padded, caches with noise after their filled positions) gives each row the
    # logits and cache it gets alone, and leaves that noise out of every output
    pasts = [example[name].numpy() for name in past_names]
    lengths = example["past_length"].numpy(), example["input_length"].numpy()
    logits, *presents = onnx_step(example["input_ids"].numpy(), pasts, *lengths)
    for row in range(logits.shape[0]):
        p, n = int(lengths[0][row, 0]), int(lengths[1][row, 0])
        clean = [np.where(np.arange(a.shape[2])[:, None] < p, a[row:row + 1], 0) for a in pasts]
        alone, *alone_presents = onnx_step(example["input_ids"][row:row + 1, :n].numpy(), clean,
                                           np.array([[p]], np.int64), np.array([[n]], np.int64))
        np.testing.assert_allclose(logits[row], alone[0], atol=1e-4)
        for batched, single in zip(presents, alone_presents):
            np.testing.assert_allclose(batched[row], single[0], atol=1e-5)
            assert not np.any(batched[row][:, p + n:])
