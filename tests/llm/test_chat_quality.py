"""The chat measures of a quantized LM (export/chat_quality.py) as `tritonkit build` runs them: reported beside the
plain-text measures, bounded by `quantize.lm`. The tiny GPT (random weights) carries them: it answers nothing
right, so the numbers are checked for their shape; SmolLM2's are in test_smollm2_answers.py."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.llm.conftest import recipe_export, write_spec
from tests.llm.test_quantize import build_json, refused_build
from tritonkit.pipelines.llm.export.chat_tasks import load_tasks

pytestmark = pytest.mark.slow   # each exports and builds the llm starter: seconds to tens of seconds


def test_the_starter_reports_its_chat_measures(tmp_path: Path) -> None:
    out, log = build_json(write_spec(tmp_path, "tiny", quantized=True))
    lm = out["exports"]["generate"]["quantized"]["lm"]
    assert lm["chat_tasks"] == len(load_tasks()) and lm["chat_max_tokens"] == 32
    assert lm["task_accuracy_drop"] == pytest.approx(lm["task_accuracy_float"] - lm["task_accuracy_quantized"])
    assert 0 <= lm["chat_greedy_agreement"] <= 1
    assert set(lm["task_accuracy_by_category"]) == {"fact", "arithmetic", "instruction", "recall"}
    assert f"chat tasks right {lm['task_accuracy_quantized']:.3f} vs {lm['task_accuracy_float']:.3f}" in log


def test_a_chat_bound_without_the_models_chat_format_refuses_the_build_in_one_line(tmp_path: Path) -> None:
    export = recipe_export("tiny")
    export["quantize"]["lm"]["max_task_accuracy_drop"] = 0.02
    spec = write_spec(tmp_path, "tiny", quantized=True, generate_overrides={"export": export})
    generation = tmp_path / "assets" / "generation.json"
    generation.write_text(json.dumps(json.loads(generation.read_text()) | {"chat": None}))
    last = refused_build(spec)
    assert "tritonkit.yaml: models.generate.export.quantize.lm.max_task_accuracy_drop:" in last
    assert "the chat measures need the model's chat format" in last and "has none" in last
