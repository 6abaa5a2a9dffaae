"""The chat task set a quantized LM is scored on (export/chat_tasks.jsonl), how a reply is scored, and the
`quantize.lm` bounds on the chat measures (export/quality.py check_bounds). No graph runs here."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tritonkit.errors import Where
from tritonkit.export.errors import VerificationError
from tritonkit.pipelines.llm.export.chat_tasks import (
    CATEGORIES,
    answered,
    first_sentence,
    is_right,
    load_tasks,
    normalize,
)
from tritonkit.pipelines.llm.export.quality import check_bounds
from tritonkit.pipelines.llm.runtime.chat import format_chat
from tritonkit.pipelines.llm.spec import LMQualitySpec

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
STARTER_GENERATION = Path(__file__).resolve().parents[2] / "examples" / "llm" / "tiny" / "assets" / "generation.json"


def test_the_task_set_has_every_category_each_chat_with_the_system_prompt() -> None:
    tasks = load_tasks()
    counts = Counter(t.category for t in tasks)
    assert len(tasks) >= 150 and set(counts) == set(CATEGORIES) and min(counts.values()) >= 30, counts
    for task in tasks:
        roles = [m["role"] for m in task.messages]
        assert task.messages[0] == SYSTEM, task
        assert roles[1:] == ["user", "assistant"] * (len(roles) // 2 - 1) + ["user"], task
        assert task.accept and all(normalize(a) for a in task.accept), task
    assert all(len(t.messages) == 4 for t in tasks if t.category == "recall")   # a fact, its acknowledgement, the ask
    assert len({json.dumps(t.messages) for t in tasks}) == len(tasks)


def test_no_question_gives_its_answer_away() -> None:
    """Outside instructions (which may quote what to transform), an accepted answer is not in the last question:
    a reply that only repeats the question is not right."""
    for task in load_tasks():
        if task.category != "instruction":
            asked = task.messages[-1]["content"]
            assert not is_right(asked, task.accept), task


def test_the_chats_render_in_the_models_chat_format_with_their_own_system_prompt() -> None:
    chat = json.loads(STARTER_GENERATION.read_text())["chat"]
    task = next(t for t in load_tasks() if t.category == "recall")
    prompt = format_chat(chat | {"default_system": "Another default."}, task.messages)
    assert prompt.startswith("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n")
    assert prompt.endswith("<|im_end|>\n<|im_start|>assistant\n") and "Another default" not in prompt


@pytest.mark.parametrize(("reply", "accept", "right"), [
    ("The capital of France is Paris.", ["Paris"], True),
    (" the capital of france is PARIS", ["paris"], True),              # case, leading space, no full stop
    ("La femme de France, le Grand Croix.", ["Paris"], False),
    ("Paris is lovely. Or Lyon.", ["Lyon"], False),                    # only the first sentence counts
    ("Parisian food is rich.", ["Paris"], False),                      # whole words only
    ("The largest ocean is the Pacific Ocean.", ["the Pacific"], True),  # the accepted answer's article goes
    ("Water boils at 100 degrees Celsius (212 F).", ["100"], True),
    ("It is 3.5 or so, not 4. Sorry.", ["4"], True),                    # "3.5" does not end the sentence
    ("The first letter of 'dog' is 'd'.", ["d"], True),                # apostrophes dropped, not spaces
    ("I'd say it is o.", ["d"], False),
    ("7 + 5 = 12", ["12", "twelve"], True),
    ("Counting:\n1, 2, 3", ["1 2 3"], False),                          # a line break ends the first sentence
    ("1, 2, 3, 4, 5.", ["1 2 3 4 5"], True),
    ("", ["yes"], False),
])
def test_a_reply_is_right_when_an_accepted_answer_is_words_of_its_first_sentence(reply: str, accept: list[str],
                                                                               right: bool) -> None:
    assert is_right(reply, accept) is right


def test_a_reply_is_answered_once_text_follows_its_first_sentence() -> None:
    assert [answered(r) for r in ("Paris", "Paris.", "Paris. It", "It is 3.", "It is 3.5", "Yes\nand")] == \
        [False, False, True, False, False, True]
    assert first_sentence("  Yes!  Of course.") == "Yes"


def test_the_drops_standard_error_is_that_of_the_paired_differences() -> None:
    import numpy as np

    from tritonkit.pipelines.llm.export.chat_quality import drop_stderr

    differences = np.array([1] * 8 + [-1] * 4 + [0] * 191)   # 8 right in float only, 4 quantized only, of 203
    assert drop_stderr(8, 4, 203) == pytest.approx(differences.std() / np.sqrt(203))
    assert drop_stderr(0, 0, 203) == 0


def chat_result(**changes: Any) -> dict[str, Any]:
    """A measure's result that every bound below passes, with `changes`."""
    return {"greedy_agreement_quantized_vs_float": 0.98, "perplexity_quantized_over_float": 1.02,
            "prompts": 8, "tokens_per_prompt": 32, "perplexity_quantized": 10.2, "perplexity_float": 10.0,
            "task_accuracy_float": 0.5, "task_accuracy_quantized": 0.49, "task_accuracy_drop": 0.01,
            "tasks_right_float_only": 6, "tasks_right_quantized_only": 4, "chat_greedy_agreement": 0.97,
            "chat_tasks": 200} | changes


WHERE = Where("tritonkit.yaml", "models.generate.export.quantize.lm")
BOUNDS = {"tokenizer": "assets/tokenizer.json", "max_task_accuracy_drop": 0.02, "min_chat_greedy_agreement": 0.95}


def refusal(result: dict[str, Any], **bounds: Any) -> str:
    with pytest.raises(VerificationError) as caught:
        check_bounds(result, LMQualitySpec.model_validate(BOUNDS | bounds), WHERE, Path("assets/generation.json"))
    assert len(caught.value.problems) == 1
    line = caught.value.problems[0].line()
    assert "\n" not in line
    return line


def test_the_chat_bounds_pass_what_they_allow() -> None:
    check_bounds(chat_result(task_accuracy_drop=0.02, chat_greedy_agreement=0.95),
                 LMQualitySpec.model_validate(BOUNDS), WHERE, Path("assets/generation.json"))
    check_bounds(chat_result(task_accuracy_drop=-0.05), LMQualitySpec.model_validate(BOUNDS), WHERE, Path("x"))


def test_an_accuracy_drop_above_the_bound_refuses_in_one_located_line() -> None:
    line = refusal(chat_result(task_accuracy_float=0.5, task_accuracy_quantized=0.47, task_accuracy_drop=0.03))
    assert line.startswith("tritonkit.yaml: models.generate.export.quantize.lm.max_task_accuracy_drop: ")
    assert "47.0% of 200 chat tasks right, the float graph 50.0%: a drop of 0.030, above 0.02" in line
    assert "6 right in float only, 4 in the quantized graph only" in line and "raise the bound" in line


def test_a_chat_agreement_below_the_bound_refuses_in_one_located_line() -> None:
    line = refusal(chat_result(chat_greedy_agreement=0.9))
    assert line.startswith("tritonkit.yaml: models.generate.export.quantize.lm.min_chat_greedy_agreement: ")
    assert "at 90.0% of their positions, below 0.95" in line


def test_a_chat_bound_without_a_chat_format_refuses() -> None:
    plain = {k: v for k, v in chat_result().items() if not k.startswith(("task", "chat"))}
    line = refusal(plain, min_chat_greedy_agreement=None)
    assert line.startswith("tritonkit.yaml: models.generate.export.quantize.lm.max_task_accuracy_drop: ")
    assert "need the model's chat format, and assets/generation.json does not exist" in line
    check_bounds(plain, LMQualitySpec.model_validate({"tokenizer": "t.json"}), WHERE, Path("x"))  # no chat bound


def test_the_bounds_are_fractions() -> None:
    from pydantic import ValidationError

    for bad in ({"max_task_accuracy_drop": 2}, {"min_chat_greedy_agreement": -0.1}):
        with pytest.raises(ValidationError):
            LMQualitySpec.model_validate({"tokenizer": "t.json"} | bad)
