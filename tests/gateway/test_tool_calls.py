"""The gateway's structured-output and tool-calling pieces without a server: request checks, the grammar a required
call gets (compiled and matched by llguidance on the tiny tokenizer), conversations with tool turns rendered in the
model's tool format, and answers split into content and tool_calls deltas that add up the same however the text
was streamed."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tritonkit.gateway.errors import ApiError
from tritonkit.pipelines.llm.gateway.answer import Reader, json_end
from tritonkit.pipelines.llm.gateway.messages import chat_messages, with_tools
from tritonkit.pipelines.llm.gateway.protocol import ChatRequest
from tritonkit.pipelines.llm.gateway.structured import grammar_of
from tritonkit.pipelines.llm.gateway.tools import Format, tools_of

TINY_TOKENIZER = Path(__file__).resolve().parents[2] / "examples" / "llm" / "tiny" / "assets" / "tokenizer.json"
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
           "additionalProperties": False}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}},
         {"type": "function", "function": {"name": "add", "parameters": {
             "type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}}}}}]


def request(fields: dict) -> ChatRequest:
    """A chat request as the route reads it."""
    return ChatRequest.checked({"model": "m", "messages": [{"role": "user", "content": "Hi"}], **fields})


def checked(fields: dict):
    """The request's tools and grammar, each checked as the route checks them."""
    body = request(fields)
    return (tools_of(body.tools, body.tool_choice, body.parallel_tool_calls, None),
            grammar_of(body.response_format, body.structured_outputs))


def tools(choice: object = "required", parallel: bool = True):
    found = checked({"tools": TOOLS, "tool_choice": choice, "parallel_tool_calls": parallel})[0]
    assert found is not None
    return found


def streamed(reader: Reader, text: str, seed: int) -> tuple[str, dict[int, list[str]]]:
    """The content and the calls ([name, arguments] by index) the deltas of `text`, cut at random, add up to."""
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(text)), min(8, len(text) - 1)))
    content, calls = "", {}
    for piece in [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)])]:
        more, deltas = reader.add(piece)
        content += more
        for delta in deltas:
            entry = calls.setdefault(delta["index"], ["", ""])
            entry[0] += delta["function"].get("name", "")
            entry[1] += delta["function"].get("arguments", "")
    more, deltas = reader.finish()
    for delta in deltas:
        calls.setdefault(delta["index"], ["", ""])[0] += delta["function"].get("name", "")
        calls[delta["index"]][1] += delta["function"].get("arguments", "")
    return content + more, calls


REQUIRED = ('{"name": "get_weather", "arguments": {"city": "Pa}ris \\"{"}}\n</tool_call>\n<tool_call>\n'
            '{"name": "add", "arguments": {"a": [1, 2]}}')


@pytest.mark.parametrize(("choice", "text", "content", "calls"), [
    ("required", REQUIRED, "", {0: ["get_weather", '{"city": "Pa}ris \\"{"}'], 1: ["add", '{"a": [1, 2]}']}),
    ({"type": "function", "function": {"name": "add"}}, '{"a": [3]}', "", {0: ["add", '{"a": [3]}']}),
    ("auto", ' <tool_call>\n{"name": "add", "arguments": {"a": [1]}}\n</tool_call>', "", {0: ["add", '{"a": [1]}']}),
    ("auto", "It is sunny. <tool_call>", "It is sunny. <tool_call>", {}),
    ("auto", "<tool_call>\nnot json\n</tool_call>", "<tool_call>\nnot json\n</tool_call>", {}),
], ids=["required", "named", "auto-call", "auto-answer", "auto-broken-call"])
def test_an_answer_streams_as_the_whole_reads(choice, text, content, calls):
    for seed in range(10):
        assert streamed(Reader(tools(choice)), text, seed) == (content, calls)
    whole_content, whole_calls = Reader(tools(choice)).read(text)
    assert (whole_content, {i: [c["function"]["name"], c["function"]["arguments"]] for i, c in
                            enumerate(whole_calls)}) == (content, calls)
    assert all(c["id"].startswith("call_") and c["type"] == "function" for c in whole_calls)


def test_json_end_skips_brackets_inside_strings():
    assert json_end('{"a": "}]\\"{", "b": [1, {"c": 2}]} tail') == len('{"a": "}]\\"{", "b": [1, {"c": 2}]}')
    assert json_end('{"a": [1, ') is None


def test_a_required_calls_grammar_compiles_and_takes_only_calls():
    llguidance = pytest.importorskip("llguidance")
    grammar = tools("required").grammar()
    assert grammar is not None and grammar.kind == "grammar"
    tokenizer = llguidance.LLTokenizer(str(TINY_TOKENIZER))   # bytes are its tokens
    matcher = llguidance.LLMatcher(tokenizer, llguidance.LLMatcher.grammar_from_lark(grammar.value), log_level=0)
    assert not matcher.is_error(), matcher.get_error()
    assert matcher.validate_tokens(list(REQUIRED.encode())) == len(REQUIRED.encode())
    assert matcher.validate_tokens(list(b'{"name": "nope"')) < len(b'{"name": "nope"')
    single = tools("required", parallel=False).grammar()
    assert single is not None and "call (" not in single.value
    named = tools({"type": "function", "function": {"name": "get_weather"}}).grammar()
    assert named is not None and named.kind == "json_schema" and json.loads(named.value)["required"] == ["city"]


def test_tool_turns_render_in_the_tool_format():
    body = request({"messages": [
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
            {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "c2", "content": "rain"}]})
    rendered = with_tools(chat_messages(body.messages, Format()), tools("auto"), "Be helpful.")
    assert [m["role"] for m in rendered] == ["system", "user", "assistant", "user"]
    system, call, results = rendered[0]["content"], rendered[2]["content"], rendered[3]["content"]
    assert system.startswith("Be helpful.\n\nYou may call") and '"name": "add"' in system
    assert call == ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
                    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>')
    assert results == "<tool_response>\nsunny\n</tool_response>\n<tool_response>\nrain\n</tool_response>"
    own = Format.of({"tools": {"call": "[CALL]{call}[/CALL]"}})
    assert own.opening == "[CALL]" and own.response == Format().response


@pytest.mark.parametrize(("body", "param"), [
    ({"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "nope"}}}, "tool_choice"),
    ({"tools": TOOLS, "tool_choice": "sometimes"}, "tool_choice"),
    ({"tools": [{"type": "function", "function": {"name": "f", "params": {}}}]}, "tools[0].function.params"),
    ({"tools": [TOOLS[0], TOOLS[0]]}, "tools"),
    ({"tools": TOOLS, "parallel_tool_calls": "yes"}, "parallel_tool_calls"),
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {}, "strict": 1}}},
     "response_format.json_schema.strict"),
    ({"response_format": {"type": "json_object", "schema": {}}}, "response_format.schema"),
    ({"structured_outputs": {"grammar": ""}}, "structured_outputs.grammar"),
])
def test_bad_requests_name_the_parameter(body, param):
    with pytest.raises(ApiError) as caught:
        checked(body)
    assert caught.value.status == 400 and caught.value.param == param


def test_a_schema_that_is_not_strict_skips_unimplemented_keywords():
    strict = checked({"response_format": {"type": "json_schema", "json_schema": {
        "name": "x", "strict": True, "schema": {"type": "object"}}}})[1]
    loose = checked({"response_format": {"type": "json_schema", "json_schema": {
        "name": "x", "schema": {"type": "object"}}}})[1]
    assert strict is not None and loose is not None
    assert json.loads(strict.value) == {"type": "object"}
    assert json.loads(loose.value) == {"type": "object", "x-guidance": {"lenient": True}}
