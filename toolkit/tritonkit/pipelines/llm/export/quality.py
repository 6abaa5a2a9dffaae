"""How much a quantized KV-cache decoder (see `kv_graph`) differs from its float graph where it matters for an LM.

Two measures, both run with onnxruntime on the two exported files:
- greedy agreement: the float graph continues each of `PROMPTS` by `TOKENS` greedy tokens; the quantized graph is
  fed the same prompt and tokens (teacher forcing) and at each of the len(PROMPTS) x TOKENS positions picks its own
  greedy token: the agreement is the fraction of positions where it picks the float graph's. Also reported, free
  running: both continue on their own (end tokens ignored) and positions are compared, so one early difference
  makes every later position differ (a harsher, noisier figure);
- perplexity on `perplexity.txt` (shipped beside this module): exp of the mean negative log-likelihood of each
  token given the tokens before it, over windows of `WINDOW` tokens scored from an empty cache (a window's
  first token has no context and is not scored), for each graph; reported with their ratio.
With the model's chat format (generation.json), `chat_quality` adds how both graphs answer a chat task set: task
accuracy and greedy agreement on chat prompts.
The export child calls `measure` (through the llm plugin) when a spec asks `export.quantize.lm`; it refuses
the export when a result is worse than the spec's bound.
"""
import math
from pathlib import Path
from typing import Any

import numpy as np

from tritonkit.errors import Where
from tritonkit.export.errors import VerificationError
from tritonkit.pipelines.llm.export.graph import Graph
from tritonkit.pipelines.llm.runtime.assets import GENERATION_FILE, GenerationConfig

TEXT = Path(__file__).with_name("perplexity.txt")
#: Short English openings of different kinds; their continuations are the greedy comparison.
PROMPTS = (
    "The capital of France is",
    "Once upon a time, in a small village,",
    "To make a cup of tea, first",
    "The three primary colours are",
    "def fibonacci(n):",
    "Water boils at a temperature of",
    "The best way to learn a new language is",
    "In 1969, the first people to walk on the Moon",
)
TOKENS = 32
WINDOW = 128


def greedy(graph: Graph, prompts: list[np.ndarray], tokens: int = TOKENS,
           forced: np.ndarray | None = None) -> np.ndarray:
    """[prompts, tokens]: each step's argmax, all prompts in one batch. The next step is fed that argmax, or with
    `forced` ([prompts, tokens]) the forced token instead (teacher forcing: the next-token choice at each position
    of another continuation)."""
    caches = graph.caches([len(p) + tokens for p in prompts])
    logits = graph.step(caches, prompts)
    out = np.empty((len(prompts), tokens), np.int64)
    for t in range(tokens):
        out[:, t] = logits.argmax(-1)
        if t + 1 < tokens:
            fed = out[:, t] if forced is None else forced[:, t]
            logits = graph.step(caches, [np.array([i]) for i in fed])
    return out


def mean_nll(graph: Graph, windows: list[np.ndarray]) -> float:
    """Mean negative log-likelihood of every window token after the first, fed one token per step."""
    total, count = 0.0, 0
    caches = graph.caches([len(w) for w in windows])
    logits = graph.step(caches, [w[:1] for w in windows])
    for t in range(1, max(len(w) for w in windows)):
        live = [b for b, w in enumerate(windows) if t < len(w)]
        for b in live:
            row = logits[b].astype(np.float64)
            top = row.max()
            total += top + math.log(np.exp(row - top).sum()) - row[windows[b][t]]
            count += 1
        fed = [b for b in live if t + 1 < len(windows[b])]  # windows with a token still to score
        if fed:
            logits[fed] = graph.step([caches[b] for b in fed], [windows[b][t:t + 1] for b in fed])
    return total / count


def windows_of(ids: np.ndarray, size: int = WINDOW) -> list[np.ndarray]:
    """The text's ids cut into windows of `size` (the last may be shorter; one of under 2 tokens is dropped)."""
    return [ids[i:i + size] for i in range(0, len(ids), size) if len(ids[i:i + size]) >= 2]


class Reference:
    """The float graph's side of the measures, computed once: its greedy continuations of `PROMPTS` and its
    perplexity on `TEXT`, tokenized with the model's tokenizer."""

    def __init__(self, float_onnx: Path, tokenizer: Path) -> None:
        from tritonkit.pipelines.llm.runtime.text import TextCodec

        codec = TextCodec(tokenizer)
        self.prompts = [codec.encode(p, add_special_tokens=False) for p in PROMPTS]
        self.windows = windows_of(codec.encode(TEXT.read_text(), add_special_tokens=False))
        graph = Graph(float_onnx)
        self.tokens = greedy(graph, self.prompts)
        self.perplexity = math.exp(mean_nll(graph, self.windows))

    def against(self, quantized_onnx: Path) -> dict[str, Any]:
        """Greedy agreement and perplexities of `quantized_onnx` against the float graph."""
        graph = Graph(quantized_onnx)
        same = greedy(graph, self.prompts, forced=self.tokens) == self.tokens
        free = greedy(graph, self.prompts) == self.tokens
        perplexity = math.exp(mean_nll(graph, self.windows))
        return {"greedy_agreement_quantized_vs_float": round(float(same.mean()), 4),
                "greedy_agreement_free_running": round(float(free.mean()), 4),
                "perplexity_float": round(self.perplexity, 4), "perplexity_quantized": round(perplexity, 4),
                "perplexity_quantized_over_float": round(perplexity / self.perplexity, 4),
                "prompts": len(self.prompts), "tokens_per_prompt": TOKENS,
                "perplexity_tokens": sum(len(w) - 1 for w in self.windows)}


def measure(float_onnx: Path, quantized_onnx: Path, lm: Any, project_dir: Path, where: Where) -> dict[str, Any]:
    """Greedy agreement and perplexities of the two graphs, and their chat measures when the generation.json beside
    the tokenizer (as the runtime reads them) has a chat format; refuses (VerificationError) below the spec's bounds.

    `lm` is the spec's `export.quantize.lm` (tokenizer path relative to the project, the optional bounds)."""
    from tritonkit.pipelines.llm.export.chat_quality import ChatReference

    tokenizer = project_dir / lm.tokenizer
    result = Reference(float_onnx, tokenizer).against(quantized_onnx)
    generation = tokenizer.with_name(GENERATION_FILE)
    config = GenerationConfig.load(generation.parent) if generation.is_file() else None
    if config is not None and config.chat is not None:
        result |= ChatReference(float_onnx, tokenizer, config).against(quantized_onnx)
    check_bounds(result, lm, where, generation)
    return result


def check_bounds(result: dict[str, Any], lm: Any, where: Where, generation: Path) -> None:
    """One located error when a measure is worse than the spec asks (or a chat bound has no chat measures)."""
    agreement, ratio = result["greedy_agreement_quantized_vs_float"], result["perplexity_quantized_over_float"]
    if lm.min_greedy_agreement is not None and agreement < lm.min_greedy_agreement:
        raise VerificationError.at(
            where.at("min_greedy_agreement"),
            f"the quantized graph's greedy tokens agree with the float graph's at {agreement:.1%} of "
            f"{result['prompts']} x {result['tokens_per_prompt']} positions, below {lm.min_greedy_agreement:g}",
            "quantize with weights: int8 or a smaller export.quantize.block_size, or lower the bound")
    if lm.max_perplexity_ratio is not None and ratio > lm.max_perplexity_ratio:
        raise VerificationError.at(
            where.at("max_perplexity_ratio"),
            f"the quantized graph's perplexity is {ratio:.3f}x the float graph's ({result['perplexity_quantized']:.2f} "
            f"vs {result['perplexity_float']:.2f}), above {lm.max_perplexity_ratio:g}",
            "quantize with weights: int8 or a smaller export.quantize.block_size, or raise the bound")
    chat_bounds = [b for b in ("min_chat_greedy_agreement", "max_task_accuracy_drop") if getattr(lm, b) is not None]
    if chat_bounds and "task_accuracy_drop" not in result:
        raise VerificationError.at(
            where.at(chat_bounds[0]), f"the chat measures need the model's chat format, and {generation} "
            f"{'has none' if generation.is_file() else 'does not exist'}",
            f"write the model's {GENERATION_FILE} (with a chat format) beside lm.tokenizer, or remove the bound")
    if lm.min_chat_greedy_agreement is not None and result["chat_greedy_agreement"] < lm.min_chat_greedy_agreement:
        raise VerificationError.at(
            where.at("min_chat_greedy_agreement"),
            f"on the chat tasks' prompts the quantized graph's greedy tokens agree with the float graph's replies at "
            f"{result['chat_greedy_agreement']:.1%} of their positions, below {lm.min_chat_greedy_agreement:g}",
            "quantize with weights: int8 or head_rescore_top_k: 0, or lower the bound")
    drop = result.get("task_accuracy_drop", 0.0)
    if lm.max_task_accuracy_drop is not None and drop > lm.max_task_accuracy_drop:
        raise VerificationError.at(
            where.at("max_task_accuracy_drop"),
            f"the quantized graph answers {result['task_accuracy_quantized']:.1%} of {result['chat_tasks']} chat "
            f"tasks right, the float graph {result['task_accuracy_float']:.1%}: a drop of {drop:.3f}, above "
            f"{lm.max_task_accuracy_drop:g} ({result['tasks_right_float_only']} right in float only, "
            f"{result['tasks_right_quantized_only']} in the quantized graph only)",
            "quantize with weights: int8 or head_rescore_top_k: 0, or raise the bound")
