"""Constrained decoding: a request's JSON schema, regular expression, choice list or Lark grammar, compiled with
llguidance into a matcher that says which tokens may come next; the engine masks the other tokens out of that
request's row of logits before sampling, so a constrained generation always parses while the rows beside it are
left untouched.

A grammar is compiled once per distinct text (an LRU of compiled matchers) and each generation advances its own
copy. llguidance compiles a schema in about a millisecond and computes a mask in tens of microseconds on SmolLM2's
49,152 tokens (its lexer runs lazily, token by token), where outlines-core builds a whole-vocabulary index first
(30-250 ms a schema, seconds for JSON mode); see docs/pipelines/llm.md.
"""
from __future__ import annotations

import json
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Request inputs (and parameters) that constrain a generation, at most one a request.
KINDS = ("json_schema", "regex", "choice", "grammar")
#: JSON as json.dumps writes it: one space after ':' and ',', no other whitespace (a small model given free
#: whitespace may spend its tokens on it).
JSON_OPTIONS = {"whitespace_flexible": False, "key_separator": ": ", "item_separator": ", "}
#: Compiled grammars kept (a schema's matcher is a few hundred kB at most).
CACHE_SIZE = 64
#: Float penalties of the 8 tokens of each mask byte: 0 where the bit is set (allowed), -inf where not.
_PENALTIES = np.where(np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little") > 0,
                      np.float32(0.0), np.float32(-np.inf)).astype(np.float32)


@dataclass(frozen=True)
class Constraint:
    """What a request constrains its output to: `kind` one of KINDS, `source` its text (a schema's JSON, a
    regular expression, the choices as a JSON list, a Lark grammar)."""

    kind: str
    source: str

    def grammar(self) -> str:
        """The llguidance grammar; ValueError naming the input when it cannot be read."""
        import llguidance

        build = llguidance.LLMatcher
        if self.kind == "json_schema":
            try:
                schema = json.loads(self.source)
            except json.JSONDecodeError as exc:
                raise ValueError(f"json_schema is not valid JSON: {exc}") from None
            if not isinstance(schema, (dict, bool)):
                raise ValueError(f"json_schema must be a JSON object (a schema), got {type(schema).__name__}")
            return build.grammar_from_json_schema(schema, defaults=JSON_OPTIONS)  # type: ignore[arg-type]
        if self.kind == "regex":
            return build.grammar_from_regex(self.source)
        if self.kind == "choice":
            choices = json.loads(self.source)
            return build.grammar_from_lark("start: " + " | ".join(json.dumps(c, ensure_ascii=False) for c in choices))
        return build.grammar_from_lark(self.source)


def constraint_of(values: Mapping[str, Any]) -> Constraint | None:
    """The constraint among a request's typed settings (`json_schema`, `regex`, `grammar` strings, `choice` a
    tuple of strings); ValueError when it names more than one, or a choice list is empty."""
    given = [k for k in KINDS if values.get(k) is not None]
    if not given:
        return None
    if len(given) > 1:
        raise ValueError(f"send one of {', '.join(KINDS)}; this request has {' and '.join(given)}")
    kind = given[0]
    value = values[kind]
    if kind == "choice":
        choices = list(value)
        if not choices or any(not c for c in choices):
            raise ValueError("choice must list at least one non-empty string")
        return Constraint(kind, json.dumps(choices, ensure_ascii=False))
    if not value:
        raise ValueError(f"{kind} is empty")
    return Constraint(kind, value)


class Matcher:
    """One generation's place in its grammar: masks a row of logits, then advances by the token chosen."""

    def __init__(self, matcher: Any, vocab_size: int, timing: MaskTiming) -> None:
        self.matcher = matcher
        self.vocab_size = vocab_size
        self.bits = np.full((1, (vocab_size + 31) // 32), -1, dtype=np.int32)
        self.timing = timing

    def mask(self, logits: np.ndarray) -> bool:
        """Sets the logits of tokens the grammar forbids next to -inf, in place (this row only); False when the
        grammar allows no token (it has ended)."""
        import llguidance.numpy

        started = time.perf_counter()
        llguidance.numpy.fill_next_token_bitmask(self.matcher, self.bits)
        logits += _PENALTIES.take(self.bits.view(np.uint8).reshape(-1), axis=0).reshape(-1)[:self.vocab_size]
        self.timing.add(time.perf_counter() - started)
        return bool(self.bits.any())

    def advance(self, token: int) -> bool:
        """Consumes the chosen token; True when the grammar is complete (only an end token could follow)."""
        if not self.matcher.consume_token(int(token)):
            raise RuntimeError(f"the grammar refused token {token} its own mask allowed: {self.matcher.get_error()}")
        return bool(self.matcher.is_stopped())


@dataclass
class MaskTiming:
    """Time spent computing and applying masks, and how many (the benchmarks report the time per token)."""

    seconds: float = 0.0
    masks: int = 0

    def add(self, seconds: float) -> None:
        self.seconds += seconds
        self.masks += 1


class Grammars:
    """Compiled grammars for one tokenizer, by constraint. Thread-safe: `generate` compiles a request's grammar when
    it arrives (llguidance releases the GIL while compiling, so the generation loop runs on) and the loop copies
    it at admission."""

    def __init__(self, tokenizer_json: str, vocab_size: int, eos_token_ids: Iterable[int],
                 capacity: int = CACHE_SIZE) -> None:
        self.tokenizer_json = tokenizer_json
        self.vocab_size = int(vocab_size)
        self.eos_token_ids = sorted(int(i) for i in eos_token_ids)
        self.capacity = capacity
        self.timing = MaskTiming()
        self._tokenizer: Any = None
        self._compiled: OrderedDict[Constraint, Any] = OrderedDict()
        self._lock = threading.Lock()

    def tokenizer(self) -> Any:
        """llguidance's view of the vocabulary: built on first use (about a second for a 49k-token BPE)."""
        with self._lock:
            if self._tokenizer is None:
                try:
                    import llguidance
                except ImportError:
                    raise ValueError("constrained decoding needs llguidance on the server (pip install llguidance; "
                                     "tritonkit's llm extra has it)") from None
                self._tokenizer = llguidance.LLTokenizer(self.tokenizer_json, n_vocab=self.vocab_size,
                                                         eos_token=self.eos_token_ids)
            return self._tokenizer

    def compile(self, constraint: Constraint) -> Any:
        """The compiled matcher (cached); ValueError naming the input and what is wrong when it does not compile."""
        with self._lock:
            if constraint in self._compiled:
                self._compiled.move_to_end(constraint)
                return self._compiled[constraint]
        import llguidance

        tokenizer = self.tokenizer()
        try:
            grammar = constraint.grammar()
        except ValueError as exc:
            named = str(exc).startswith(constraint.kind)
            raise ValueError(str(exc) if named else f"{constraint.kind}: {exc}") from None
        matcher = llguidance.LLMatcher(tokenizer, grammar, log_level=0)
        if matcher.is_error():
            raise ValueError(f"{constraint.kind} does not compile: {_one_line(matcher.get_error(), constraint.kind)}")
        with self._lock:
            self._compiled[constraint] = matcher
            while len(self._compiled) > self.capacity:
                self._compiled.popitem(last=False)
        return matcher

    def matcher(self, constraint: Constraint) -> Matcher:
        """A fresh matcher for one generation."""
        return Matcher(self.compile(constraint).deep_copy(), self.vocab_size, self.timing)


def _one_line(message: str, kind: str) -> str:
    """llguidance's error on one line: its first line and the `error:` lines of a regex's report, without the
    echoed source; a position only for a Lark grammar (the others are rewritten into one first)."""
    lines = [line.strip() for line in message.strip().splitlines()]
    if not lines:
        return "unknown error"
    head = lines[0] if kind == "grammar" else re.sub(r"^at \d+\(\d+\): ", "", lines[0])
    head = head.replace(" (in regex)", "").removesuffix(" regex parse error:").removesuffix(":").strip()
    return ": ".join([head, *(line[len("error: "):] for line in lines[1:] if line.startswith("error: "))])
