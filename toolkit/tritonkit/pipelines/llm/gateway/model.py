"""What the gateway knows about the LLM pipeline: its tensors, its files (chat format, tokenizer), its answers.

The gateway calls the engine, `generate`, not the `llm` ensemble: it renders a conversation with the model's own chat
format (generation.json), encodes it with the model's tokenizer (as `generate` encodes a text prompt) and streams
`input_ids` and the sampling inputs to `generate`, asking for `text_output`, `token_ids` and `finish_reason`. So a
client that leaves cancels the generation itself (Triton 2.51 does not pass an ensemble request's cancellation on to
the step that runs: the generation would go on to max_tokens holding its KV cache) and the prompt is encoded once
(the gateway needs its length for usage).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tritonclient.grpc import InferResult

from tritonkit.gateway.errors import ApiError
from tritonkit.gateway.model_files import newest_with
from tritonkit.pipelines.llm.gateway.structured import Grammar
from tritonkit.pipelines.llm.names import ENGINE as ENTRY_MODEL
from tritonkit.pipelines.llm.runtime.assets import GENERATION_FILE, TOKENIZER_FILE, GenerationConfig
from tritonkit.pipelines.llm.runtime.chat import format_chat
from tritonkit.pipelines.llm.runtime.text import TextCodec

#: What the gateway reads of each response (generate sends only the outputs a request asks for).
OUTPUTS = ("text_output", "token_ids", "finish_reason")
#: And of a request that asks for log probabilities (of its prompt's tokens too: an echo).
LOGPROB_OUTPUTS = ("token_logprobs", "top_logprob_ids", "top_logprobs")
PROMPT_LOGPROB_OUTPUTS = ("prompt_logprobs", "prompt_top_logprob_ids", "prompt_top_logprobs")
#: Models whose version folder holds generation.json and tokenizer.json in the built repository, first found wins:
#: `generate` encodes prompts; an older layout kept them in `decoder`.
FILES_MODELS = (ENTRY_MODEL, "decoder")


@dataclass(frozen=True)
class Sampling:
    """The request's sampling settings, as the pipeline's inputs name them (None: the pipeline's default)."""

    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()
    grammar: Grammar | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    logit_bias: tuple[tuple[int, float], ...] = ()
    logprobs: int | None = None   # alternatives a token (None: no log probabilities)
    prompt_logprobs: int | None = None   # the same for the prompt's tokens

    @property
    def outputs(self) -> tuple[str, ...]:
        """The outputs to ask generate for."""
        return (OUTPUTS + (LOGPROB_OUTPUTS if self.logprobs is not None else ())
                + (PROMPT_LOGPROB_OUTPUTS if self.prompt_logprobs is not None else ()))


@dataclass
class LlmFiles:
    """The model's chat format and tokenizer, read from the built repository."""

    generation: GenerationConfig
    codec: TextCodec

    @classmethod
    def load(cls, repository: str) -> LlmFiles:
        """From a built repository folder, or one published to s3:// (the files are fetched; Triton reads the rest)."""
        with newest_with(repository, FILES_MODELS, (GENERATION_FILE, TOKENIZER_FILE)) as folder:
            if folder is None:
                raise _missing(repository)
            return cls._from(folder)

    @classmethod
    def _from(cls, folder: Path) -> LlmFiles:
        return cls(GenerationConfig.load(folder), TextCodec(folder / TOKENIZER_FILE))

    def chat_prompt(self, messages: list[dict[str, str]]) -> str:
        if not self.generation.chat:
            raise ApiError(400, f"model '{self.generation.name}' has no chat format; use /v1/completions with a raw "
                           "prompt", "messages", "model_not_supported")
        try:
            return format_chat(self.generation.chat, messages)
        except ValueError as exc:   # a role the model's chat template refuses (Gemma's system)
            raise ApiError(400, str(exc), "messages", "invalid_value") from None

    def encode(self, prompt: str) -> np.ndarray:
        """The prompt's ids as `generate` encodes a raw prompt; an empty one is a 400."""
        ids = self.codec.encode(prompt)
        if ids.size == 0:
            raise ApiError(400, "the prompt encodes to no tokens", "prompt", "invalid_value")
        return ids


def _missing(repository: str) -> ApiError:
    """No version of FILES_MODELS holds both files: the gateway points at the wrong repository."""
    models = ", ".join(FILES_MODELS)
    if repository.startswith("s3://"):
        return ApiError(503, f"{repository} holds no {GENERATION_FILE} and {TOKENIZER_FILE} (models {models})",
                        kind="server_error", code="model_files_missing")
    return ApiError(503, f"the gateway cannot find the LLM's {GENERATION_FILE} and {TOKENIZER_FILE} in {repository} "
                    f"(models {models}): start it with --repository pointing at the built repository Triton serves",
                    kind="server_error", code="model_files_missing")


def request_inputs(ids: np.ndarray, sampling: Sampling) -> dict[str, np.ndarray]:
    """`generate`'s inputs (without the batch dimension) for a prompt's ids."""
    inputs = {"input_ids": np.asarray(ids, dtype=np.int64).reshape(-1)}
    if sampling.max_tokens is not None:
        inputs["max_tokens"] = np.array([sampling.max_tokens], dtype=np.int32)
    if sampling.temperature is not None:
        inputs["temperature"] = np.array([sampling.temperature], dtype=np.float32)
    if sampling.top_p is not None:
        inputs["top_p"] = np.array([sampling.top_p], dtype=np.float32)
    if sampling.seed is not None:
        inputs["seed"] = np.array([sampling.seed], dtype=np.uint64)
    if sampling.stop:
        inputs["stop"] = _strings(sampling.stop)
    if sampling.grammar is not None:
        value = sampling.grammar.value
        inputs[sampling.grammar.kind] = _strings(value if isinstance(value, tuple) else (value,))
    for name in ("presence_penalty", "frequency_penalty"):
        if getattr(sampling, name) is not None:
            inputs[name] = np.array([getattr(sampling, name)], dtype=np.float32)
    if sampling.logit_bias:
        inputs["logit_bias_ids"] = np.array([i for i, _ in sampling.logit_bias], dtype=np.int64)
        inputs["logit_bias_values"] = np.array([b for _, b in sampling.logit_bias], dtype=np.float32)
    for name in ("logprobs", "prompt_logprobs"):
        if getattr(sampling, name) is not None:
            inputs[name] = np.array([getattr(sampling, name)], dtype=np.int32)
    return inputs


def _strings(values: tuple[str, ...]) -> np.ndarray:
    return np.array([s.encode("utf-8") for s in values], dtype=np.object_)


#: Stands for the id of the end token (eos) whose log probability generate lists last, one more than its token ids
#: (its id is not sent); its text is empty, as vLLM shows a special token it skips.
END_TOKEN = -2


@dataclass(frozen=True)
class TokenLogprob:
    """A generated token's log probability and its most likely alternatives (id, logprob)."""

    token: int
    logprob: float
    top: tuple[tuple[int, float], ...]


@dataclass
class Step:
    """One streamed response: the text and number of tokens it adds, the finish reason on the last, and the tokens'
    log probabilities when asked for."""

    text: str
    tokens: int
    finish_reason: str | None
    logprobs: list[TokenLogprob] = field(default_factory=list)
    prompt_logprobs: list[TokenLogprob | None] = field(default_factory=list)  # token -1: the gateway knows the ids

    @classmethod
    def of(cls, result: InferResult) -> Step:
        text = result.as_numpy("text_output")
        ids = result.as_numpy("token_ids")
        reason = result.as_numpy("finish_reason")
        added = text.reshape(-1)[0].decode("utf-8") if text is not None and text.size else ""
        finish = reason.reshape(-1)[0].decode("utf-8") if reason is not None and reason.size else ""
        tokens = ids.reshape(-1).tolist() if ids is not None else []
        prompt = result.as_numpy(PROMPT_LOGPROB_OUTPUTS[0])
        prompt_logprobs = _logprobs(result, [-1] * prompt.size, PROMPT_LOGPROB_OUTPUTS) if prompt is not None else []
        values = result.as_numpy(LOGPROB_OUTPUTS[0])
        ended = int(values is not None and values.size == len(tokens) + 1)   # an end token's, last: a token too
        logprobs = _logprobs(result, tokens + [END_TOKEN] * ended, LOGPROB_OUTPUTS)
        return cls(added, len(tokens) + ended, _openai_reason(finish) if finish else None,
                   [t for t in logprobs if t is not None], prompt_logprobs)


def _logprobs(result: InferResult, tokens: list[int], names: tuple[str, ...]) -> list[TokenLogprob | None]:
    """Log probabilities of `tokens` from the outputs `names` (a NaN: a token that has none, a prompt's first)."""
    values, top_ids, top = (result.as_numpy(name) for name in names)
    if values is None or values.size != len(tokens) or not tokens:
        return []
    top_ids = top_ids.reshape(len(tokens), -1) if top_ids is not None else np.zeros((len(tokens), 0), np.int64)
    top = top.reshape(len(tokens), -1) if top is not None else np.zeros((len(tokens), 0), np.float32)
    return [TokenLogprob(int(token), float(value), tuple(zip(map(int, ids), map(float, lps))))
            if np.isfinite(value) else None for token, value, ids, lps in zip(tokens, values.reshape(-1), top_ids, top)]


def _openai_reason(reason: str) -> str:
    """The pipeline's stop/length as OpenAI's; a cancelled generation ended early, like a stop."""
    return reason if reason in ("stop", "length") else "stop"


@dataclass
class Totals:
    """A generation summed up: its text, completion tokens and finish reason."""

    text: list[str] = field(default_factory=list)
    tokens: int = 0
    finish_reason: str | None = None
    logprobs: list[TokenLogprob] = field(default_factory=list)

    def add(self, step: Step) -> None:
        self.text.append(step.text)
        self.tokens += step.tokens
        self.logprobs += step.logprobs
        self.finish_reason = step.finish_reason or self.finish_reason
