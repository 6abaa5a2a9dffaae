"""Constrained decoding served for real (embedded Triton 2.51, the tiny starter) and asked with Triton's own clients:
a JSON schema, a regex, a choice list and a Lark grammar as request inputs or parameters of `generate` and the `llm`
ensembles, streamed and whole; requests beside them unchanged; a grammar that does not compile is INVALID_ARG."""
from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import jsonschema
import pytest

from tests.llm import clients
from tests.llm.conftest import build_repository, write_spec
from tests.llm.test_grammar import CHOICES, LARK, REGEX, SCHEMA

pytest.importorskip("llguidance")
pytestmark = pytest.mark.server
PROMPTS = ["Hello", "The capital of France is", "Once upon a time", "KV cache"]


@pytest.fixture(scope="module")
def server(serve, tmp_path_factory):
    return serve(build_repository(write_spec(tmp_path_factory.mktemp("tiny-grammar"), "tiny")))


def test_each_grammar_input_is_matched_streamed_and_whole(server):
    schema = json.dumps(SCHEMA)
    for prompt in PROMPTS[:2]:
        streamed = clients.grpc_stream(server.grpc_url, "llm", {"text_input": prompt, "max_tokens": 120,
                                                                 "json_schema": schema})
        assert streamed.error == "" and streamed.finish_reason == "stop"
        jsonschema.validate(json.loads(streamed.text), SCHEMA)
        whole = clients.http(server.http_url, "llm_complete", {"text_input": prompt, "max_tokens": 120,
                                                               "json_schema": schema}, stream=False)
        assert whole.text == streamed.text
    regex = clients.grpc_stream(server.grpc_url, "generate", {"text_input": "Code:", "regex": REGEX},
                                ids="token_ids", outputs=("token_ids", "text_output", "finish_reason"))
    assert re.fullmatch(REGEX, regex.text) and regex.finish_reason == "stop"
    choice = clients.grpc_stream(server.grpc_url, "llm", {"text_input": "Answer:", "choice": CHOICES,
                                                          "temperature": 1.0, "seed": 3})
    assert choice.text in CHOICES
    lark = clients.http(server.http_url, "generate", {"text_input": "Tuple:", "grammar": LARK, "max_tokens": 60},
                        stream=True, ids="token_ids")
    assert re.fullmatch(r"\(\d{1,2}(,\d{1,2})*\)", lark.text), lark


def test_a_request_parameter_carries_the_grammar(server):
    result = clients.grpc_stream(server.grpc_url, "llm", {"text_input": "Hello"},
                                 parameters={"regex": REGEX, "max_tokens": 20})
    assert re.fullmatch(REGEX, result.text)


def test_unconstrained_requests_beside_constrained_ones_are_unchanged(server):
    free = {"max_tokens": 24, "ignore_eos": True}
    alone = [clients.grpc_stream(server.grpc_url, "llm", {"text_input": p} | free).ids for p in PROMPTS]
    schema = json.dumps(SCHEMA)
    jobs = [("llm", {"text_input": p} | free) for p in PROMPTS]
    jobs += [("llm", {"text_input": p, "max_tokens": 120, "json_schema": schema}) for p in PROMPTS]
    with ThreadPoolExecutor(len(jobs)) as pool:
        results = list(pool.map(lambda job: clients.grpc_stream(server.grpc_url, *job), jobs))
    assert [r.ids for r in results[:len(PROMPTS)]] == alone
    for result in results[len(PROMPTS):]:
        jsonschema.validate(json.loads(result.text), SCHEMA)


@pytest.mark.parametrize("body, message", [
    ({"json_schema": '{"type": "strin"}'}, "json_schema does not compile: Invalid type: strin"),
    ({"json_schema": "{"}, "json_schema is not valid JSON"),
    ({"regex": "a(b"}, "regex does not compile: invalid regex \"a(b\": unclosed group"),
    ({"grammar": "start: foo"}, "grammar does not compile"),
    ({"regex": "a", "choice": ["a"]}, "send one of json_schema, regex, choice, grammar"),
    ({"regex": "a", "ignore_eos": True}, "ignore_eos cannot be combined with regex"),
])
def test_a_bad_grammar_is_invalid_arg_naming_the_input(server, body, message):
    """HTTP /generate answers INVALID_ARG as 400."""
    request = urllib.request.Request(f"http://{server.http_url}/v2/models/generate/generate",
                                     data=json.dumps({"text_input": "Hi"} | body).encode())
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=60)
    assert refused.value.code == 400 and message in json.loads(refused.value.read())["error"]
    over_grpc = clients.grpc_stream(server.grpc_url, "llm", {"text_input": "Hi"} | body)  # a stream's error: no status
    assert over_grpc.ids == [] and message in over_grpc.error
