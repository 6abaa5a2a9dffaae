"""How a quantized KV-cache decoder answers chats against its float graph: the measures that follow what a chat
client gets, where `quality`'s follow plain text.

Both run on `chat_tasks`' task set, each chat in the model's chat format (generation.json, `format_chat`) as the
served `generate` prompts it:
- task accuracy: the fraction of tasks whose greedy reply is right (`chat_tasks.is_right`), for the float and the
  quantized graph; the drop is float minus quantized, with the tasks each graph alone gets right and the drop's
  standard error over such paired marks (`drop_stderr`): a drop within about two of it is a few flips among many,
  not a measured loss. A reply ends at the model's end tokens, once its first sentence is complete (only that is
  scored), or at `TOKENS` tokens;
- chat greedy agreement: the quantized graph fed each task's prompt and the float graph's reply (teacher forced)
  picks the float graph's token at this fraction of the reply's positions (its last included).
A task whose every position agrees gets the float graph's reply from the quantized graph too (the same prefix at
every step, the same greedy pick), so the quantized graph generates replies of its own only for the others.
"""
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tritonkit.pipelines.llm.export.chat_tasks import CATEGORIES, ChatTask, answered, is_right, load_tasks
from tritonkit.pipelines.llm.export.graph import Graph
from tritonkit.pipelines.llm.runtime.assets import GenerationConfig
from tritonkit.pipelines.llm.runtime.chat import format_chat

TOKENS = 32
#: Prompts a decoder call runs at most (the keys/values of SmolLM2's 64 longest: ~0.4 GB).
BATCH = 64


def replies(graph: Graph, prompts: list[np.ndarray], done: Callable[[list[int]], bool], tokens: int = TOKENS,
            forced: list[np.ndarray] | None = None) -> list[np.ndarray]:
    """Each prompt's greedy reply: ids until `done` says it is complete, `tokens` at most. With `forced`, each
    prompt's greedy pick at every position of its forced reply, fed that reply (teacher forcing). Prompts of
    alike lengths share calls, `BATCH` at most."""
    out: list[np.ndarray] = [np.empty(0, np.int64)] * len(prompts)
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
    for start in range(0, len(order), BATCH):
        chunk = order[start:start + BATCH]
        lengths = [tokens] * len(chunk) if forced is None else [len(forced[i]) for i in chunk]
        made = _batch(graph, [prompts[i] for i in chunk], lengths, done if forced is None else None,
                      None if forced is None else [forced[i] for i in chunk])
        for i, reply in zip(chunk, made):
            out[i] = reply
    return out


def _batch(graph: Graph, prompts: list[np.ndarray], lengths: list[int], done: Callable[[list[int]], bool] | None,
           forced: list[np.ndarray] | None) -> list[np.ndarray]:
    """`replies` of prompts run together, each `lengths` tokens at most: a row leaves the calls when it is done."""
    caches = graph.caches([len(p) + n for p, n in zip(prompts, lengths)])
    picks: list[list[int]] = [[] for _ in prompts]
    live = list(range(len(prompts)))
    shared = _shared_start(prompts)
    if shared:
        graph.fill(caches, prompts[0][:shared])
    logits = graph.step(caches, [p[shared:] for p in prompts])
    while live:
        for row, b in enumerate(live):
            picks[b].append(int(logits[row].argmax()))
        live = [b for b in live if len(picks[b]) < lengths[b] and not (done and done(picks[b]))]
        if live:
            fed = [picks[b][-1] if forced is None else int(forced[b][len(picks[b]) - 1]) for b in live]
            logits = graph.step([caches[b] for b in live], [np.array([i], np.int64) for i in fed])
    return [np.array(p, np.int64) for p in picks]


def _shared_start(prompts: list[np.ndarray]) -> int:
    """How many ids every prompt starts with (the system prompt's, say), leaving each at least one of its own."""
    shortest = min(len(p) for p in prompts)
    first = prompts[0][:shortest - 1]
    differs = np.flatnonzero(np.any([p[:len(first)] != first for p in prompts], axis=0))
    return int(differs[0]) if len(differs) else len(first)


def drop_stderr(lost: int, gained: int, tasks: int) -> float:
    """The standard error of an accuracy drop over `tasks` paired marks, `lost` right in float only and `gained`
    in the quantized graph only (the mean of per-task differences of 1, -1 or 0)."""
    return math.sqrt(lost + gained - (lost - gained) ** 2 / tasks) / tasks


@dataclass
class Scored:
    """One graph's replies to the task set and whether each is right."""

    replies: list[np.ndarray]
    right: list[bool]

    def accuracy(self, tasks: list[ChatTask], category: str | None = None) -> float:
        marks = [r for r, t in zip(self.right, tasks) if category is None or t.category == category]
        return sum(marks) / len(marks)


class ChatReference:
    """The float graph's side, computed once: the task set's prompts in the model's chat format, the float
    graph's replies and their marks."""

    def __init__(self, float_onnx: Path, tokenizer: Path, generation: GenerationConfig) -> None:
        from tritonkit.pipelines.llm.runtime.text import TextCodec

        assert generation.chat is not None, "a chat format is needed (measure checks it)"
        self.codec = TextCodec(tokenizer)
        self.tasks = load_tasks()
        self.prompts = [self.codec.encode(format_chat(generation.chat, t.messages)) for t in self.tasks]
        self.stop = frozenset(generation.eos_token_ids)
        self.float = self.scored(replies(Graph(float_onnx), self.prompts, self.done))

    def done(self, reply: list[int]) -> bool:
        """A reply is complete at an end token or once its first sentence is (the rest is not scored)."""
        return reply[-1] in self.stop or answered(self.codec.decode(reply))

    def scored(self, made: list[np.ndarray]) -> Scored:
        return Scored(made, [is_right(self.codec.decode(r.tolist()), t.accept) for r, t in zip(made, self.tasks)])

    def against(self, quantized_onnx: Path) -> dict[str, Any]:
        """Task accuracy of both graphs and chat greedy agreement of `quantized_onnx` with the float graph."""

        graph = Graph(quantized_onnx)
        picks = replies(graph, self.prompts, self.done, forced=self.float.replies)
        same = [p == r for p, r in zip(picks, self.float.replies)]
        diverged = [i for i, s in enumerate(same) if not s.all()]
        own = replies(graph, [self.prompts[i] for i in diverged], self.done)
        made = list(self.float.replies)
        for i, reply in zip(diverged, own):
            made[i] = reply
        quantized = self.scored(made)
        accuracy = (self.float.accuracy(self.tasks), quantized.accuracy(self.tasks))
        pairs = list(zip(self.float.right, quantized.right))
        lost, gained, n = pairs.count((True, False)), pairs.count((False, True)), len(pairs)
        return {"task_accuracy_float": round(accuracy[0], 4), "task_accuracy_quantized": round(accuracy[1], 4),
                "task_accuracy_drop": round(accuracy[0] - accuracy[1], 4),
                "task_accuracy_drop_stderr": round(drop_stderr(lost, gained, n), 4),
                "tasks_right_float_only": lost, "tasks_right_quantized_only": gained,
                "task_accuracy_by_category": {c: [round(s.accuracy(self.tasks, c), 4) for s in (self.float, quantized)]
                                              for c in CATEGORIES},
                "chat_greedy_agreement": round(float(np.concatenate(same).mean()), 4),
                "chat_tasks": len(self.tasks), "chat_max_tokens": TOKENS,
                "chat_replies_changed": sum(not np.array_equal(m, f) for m, f in zip(made, self.float.replies))}
