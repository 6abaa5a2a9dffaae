"""The exported encoder's parts in process: pooling and normalization read from the model's own configuration
(changed configurations included, each against sentence-transformers on the same folder), and one padded run over
requests of different lengths equal to each request run alone."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.embed.conftest import SENTENCES, reference
from tritonkit.pipelines.embed.export.assets import write_assets
from tritonkit.pipelines.embed.export.encoder import build, model_dir
from tritonkit.pipelines.embed.export.sentence import SentenceConfig
from tritonkit.pipelines.embed.runtime.encode import Run, encode
from tritonkit.pipelines.embed.runtime.tokens import Tokens, padded

pytestmark = pytest.mark.slow   # torch, transformers and sentence-transformers load the real model: seconds

CONFIG_FILES = ("modules.json", "sentence_bert_config.json", "config.json", "tokenizer.json", "tokenizer_config.json",
                "special_tokens_map.json", "vocab.txt", "config_sentence_transformers.json", "1_Pooling/config.json")


def model_copy(tmp_path: Path, pooling: dict[str, bool] | None = None, normalize: bool = True) -> Path:
    """The installed model's configuration copied (its weights linked) with POOLING and NORMALIZE changed."""
    source, folder = Path(model_dir()), tmp_path / "model"
    for name in CONFIG_FILES:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source / name, folder / name)
    (folder / "model.safetensors").symlink_to(source / "model.safetensors")
    config = json.loads((folder / "1_Pooling/config.json").read_text())
    (folder / "1_Pooling/config.json").write_text(json.dumps({**config, **(pooling or {})}))
    modules = json.loads((folder / "modules.json").read_text())
    if not normalize:
        (folder / "modules.json").write_text(json.dumps([m for m in modules if not m["type"].endswith("Normalize")]))
    return folder


def served_tokens(folder: str, out: Path) -> Tokens:
    """The tokenizer as the starter serves it for FOLDER (written by init's asset step)."""
    return Tokens(write_assets(out, folder)[0])


def embed(folder: Path, sentences: list[str]) -> np.ndarray:
    """FOLDER's encoder (as exported, run in torch) over SENTENCES tokenized as served, in one request."""
    rows = served_tokens(str(folder), folder / "served").of_texts(sentences)
    return np.concatenate(encode(torch_run(build(str(folder))[0]), [padded(rows)]))


def torch_run(module: torch.nn.Module) -> Run:
    """The encoder module as `encode`'s run: what onnxruntime runs, in PyTorch."""

    def run(feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        with torch.no_grad():
            out = module(**{k: torch.from_numpy(v) for k, v in feeds.items()})
        return {k: v.numpy() for k, v in out.items()}

    return run


def test_the_shipped_model_reads_as_mean_pooled_and_normalized() -> None:
    assert SentenceConfig.read(model_dir()) == SentenceConfig(("mean",), True, 256)


@pytest.mark.parametrize("pooling, normalize", [
    ({}, True),
    ({"pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True}, False),
    ({"pooling_mode_max_tokens": True, "pooling_mode_mean_sqrt_len_tokens": True}, True),
])
def test_the_encoder_follows_the_configuration_as_sentence_transformers_does(
        tmp_path: Path, pooling: dict[str, bool], normalize: bool) -> None:
    folder = model_copy(tmp_path, pooling, normalize)
    sentences = SENTENCES[::10]
    ours, theirs = embed(folder, sentences), reference(sentences, str(folder))
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, atol=2e-5 * max(1.0, float(np.abs(theirs).max())))
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5) == normalize


def test_a_module_it_cannot_reproduce_is_refused_by_name(tmp_path: Path) -> None:
    folder = model_copy(tmp_path)
    modules = json.loads((folder / "modules.json").read_text())
    modules.insert(2, {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"})
    (folder / "modules.json").write_text(json.dumps(modules))
    with pytest.raises(ValueError, match=r"modules.json: modules .*'Dense'"):
        SentenceConfig.read(folder)
    folder = model_copy(tmp_path / "again", {"pooling_mode_weightedmean_tokens": True})
    with pytest.raises(ValueError, match="pooling_mode_weightedmean_tokens"):
        SentenceConfig.read(folder)


def test_one_run_over_requests_of_mixed_lengths_equals_each_alone(tmp_path: Path) -> None:
    tokens = served_tokens(model_dir(), tmp_path)
    run = torch_run(build()[0])
    requests = [padded(tokens.of_texts(SENTENCES[i:i + 3])) for i in (0, 40, 90)]
    together = encode(run, requests)
    assert [len(b) for b in together] == [3, 3, 3]
    for (ids, counts), vectors in zip(requests, together):
        for row, n, vector in zip(ids, counts.reshape(-1), vectors):   # each sentence alone: no padding at all
            alone = run({"input_ids": row[None, :n], "attention_mask": np.ones((1, n), np.int64)})["embedding"][0]
            np.testing.assert_allclose(vector, alone, atol=1e-5)
