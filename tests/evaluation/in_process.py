"""An lm-eval model that runs a served decoder folder (`generate/1`: model.onnx, tokenizer.json, generation.json) in
process, as the build's quality gate runs it (`export.graph.Graph`, `chat_quality.replies`): the same weights the
gateway serves, without Triton, the engine or HTTP, so lm-eval's scores of the two can be compared."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
from lm_eval.api.instance import Instance
from lm_eval.api.model import TemplateLM

from tritonkit.pipelines.llm.export.chat_quality import BATCH, replies
from tritonkit.pipelines.llm.export.graph import Graph
from tritonkit.pipelines.llm.runtime.assets import GenerationConfig
from tritonkit.pipelines.llm.runtime.chat import format_chat
from tritonkit.pipelines.llm.runtime.sampling import logprob
from tritonkit.pipelines.llm.runtime.text import TextCodec, find_stop


class InProcessLM(TemplateLM):
    """Log-likelihoods (contexts prefilled in one call, continuations fed a token a step) and greedy generations until
    a stop string, an end token or `max_gen_toks`; chats in the model's own chat format. Requests share decoder calls
    (`BATCH` rows at most), as the served engine's do."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder
        self.graph = Graph(folder / "model.onnx")
        self.codec = TextCodec(folder / "tokenizer.json")
        self.generation = GenerationConfig.load(folder)

    @property
    def eot_token_id(self) -> int:
        return self.generation.eos_token_ids[0]

    @property
    def tokenizer_name(self) -> str:
        return str(self.folder)

    def tok_encode(self, string: str, add_special_tokens: bool | None = None, **kwargs: Any) -> list[int]:
        return self.codec.encode(string).tolist()

    def apply_chat_template(self, chat_history: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
        assert self.generation.chat is not None, f"{self.folder} has no chat format"
        return format_chat(self.generation.chat, chat_history, add_generation_prompt)

    def _loglikelihood_tokens(self, requests: list[tuple[tuple[str, str], list[int], list[int]]],
                              **kwargs: Any) -> list[tuple[float, bool]]:
        scored: list[tuple[float, bool]] = []
        for start in range(0, len(requests), BATCH):
            scored += self._continuations([(c, t) for _, c, t in requests[start:start + BATCH]])
        return scored

    def _continuations(self, pairs: list[tuple[list[int], list[int]]]) -> list[tuple[float, bool]]:
        """Each continuation's summed log probability after its context, and whether greedy picks it: the contexts
        prefilled in one call, then the continuations fed a token a step, rows leaving as theirs end."""
        caches = self.graph.caches([len(c) + len(t) for c, t in pairs])
        logits = self.graph.step(caches, [np.array(c, np.int64) for c, _ in pairs])
        totals, greedy = [0.0] * len(pairs), [True] * len(pairs)
        live, position = list(range(len(pairs))), 0
        while live:
            for row, b in enumerate(live):
                token = pairs[b][1][position]
                totals[b] += logprob(logits[row], token, 0).logprob
                greedy[b] = greedy[b] and int(logits[row].argmax()) == token
            live = [b for b in live if position + 1 < len(pairs[b][1])]
            if live:
                logits = self.graph.step([caches[b] for b in live],
                                         [np.array([pairs[b][1][position]], np.int64) for b in live])
            position += 1
        return list(zip(totals, greedy))

    def generate_until(self, requests: list[Instance], disable_tqdm: bool = False) -> list[str]:
        """Greedy replies, requests that share stop strings and a token limit run together."""
        texts = [""] * len(requests)
        groups: dict[tuple[tuple[str, ...], int], list[int]] = {}
        for index, request in enumerate(requests):
            kwargs = request.args[1]
            until = kwargs.get("until") or []
            groups.setdefault((tuple([until] if isinstance(until, str) else until), int(kwargs["max_gen_toks"])),
                              []).append(index)
        for (until, tokens), members in groups.items():
            prompts = [self.codec.encode(requests[i].args[0]) for i in members]
            done = functools.partial(self._done, until=until)
            for i, reply in zip(members, replies(self.graph, prompts, done, tokens)):
                text = self.codec.decode([t for t in reply.tolist() if t not in self.generation.eos_token_ids])
                stop = find_stop(text, until)
                texts[i] = text if stop < 0 else text[:stop]
        return texts

    def _done(self, ids: list[int], until: tuple[str, ...]) -> bool:
        return ids[-1] in self.generation.eos_token_ids or find_stop(self.codec.decode(ids), until) >= 0

    def loglikelihood_rolling(self, requests: list[Instance], disable_tqdm: bool = False) -> list[float]:
        raise NotImplementedError("the evaluation tasks here score choices and answers, not whole texts")
