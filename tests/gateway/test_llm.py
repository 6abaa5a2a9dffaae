"""The gateway's chat and completions routes with OpenAI's official client (sync, async, streaming) against the
llm starter (tiny GPT) served on the embedded Triton: the answers equal the `llm` ensemble's own for the same
rendered prompt, usage counts equal the pipeline's (`generate`'s prompt ids, the generated ids), the stream has the
role on its first delta and exactly one finish_reason, parameters it does not support are 400s naming them, and a
client that leaves mid-stream ends its generation in Triton (its KV cache freed)."""
from __future__ import annotations

import asyncio
import http.client
import json
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import openai
import pytest
import tritonclient.grpc as grpcclient
import yaml

from tests.conftest import run_cli
from tests.gateway.answers import check_greedy_answers_depend_on_the_chat_alone, check_seeded_answers_repeat
from tests.gateway.conftest import gateway, served, starter
from tests.llm import clients
from tests.ports import quiet_ports
from tritonkit.pipelines.llm.runtime.assets import GenerationConfig
from tritonkit.pipelines.llm.runtime.chat import format_chat
from tritonkit.serve.server import EmbeddedServer

pytestmark = pytest.mark.server
KEY = "test-key-not-a-secret"
MODEL = "tiny"   # the id the spec's gateway: section gives the llm pipeline
MIN_STEP_S = 0.005
LONG = 200   # tokens: 1 s of steps (the tiny GPT holds 256 positions)
CONVERSATION = [{"role": "system", "content": "You answer briefly."}, {"role": "user", "content": "Hello there"},
                {"role": "assistant", "content": "Hi!"}, {"role": "user", "content": "What is Triton?"}]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple]:
    project = starter(tmp_path_factory.mktemp("gw-llm"), "llm", {
        "gateway": {"models": {MODEL: {"pipeline": "llm"}}, "max_request_bytes": 65536},
        # 5 ms steps: a LONG-token stream outlasts the client that leaves it and several cancellation polls
        "models": {"generate": {"parameters": {"min_step_s": MIN_STEP_S, "cancel_poll_s": 0.05}}}})
    with served(project) as server, gateway(project, server, env={"TRITONKIT_API_KEY": KEY}) as base:
        yield project, server, base


@pytest.fixture(scope="module")
def client(stack) -> openai.OpenAI:
    return openai.OpenAI(base_url=stack[2], api_key=KEY, max_retries=0)


def _triton(stack, prompt: str, max_tokens: int) -> tuple[str, list[int], str]:
    """The `llm` ensemble's own greedy answer for a raw prompt: text, generated ids, finish reason."""
    _, server, _ = stack
    client = grpcclient.InferenceServerClient(server.grpc_url)
    inputs = {"text_input": np.array([[prompt.encode()]], dtype=object), "chat": np.array([[False]]),
              "max_tokens": np.array([[max_tokens]], dtype=np.int32),
              "temperature": np.array([[0.0]], dtype=np.float32)}
    items = []
    for name, value in inputs.items():
        item = grpcclient.InferInput(name, list(value.shape), "BYTES" if value.dtype == object else
                                     {np.bool_: "BOOL", np.int32: "INT32", np.float32: "FP32"}[value.dtype.type])
        item.set_data_from_numpy(value)
        items.append(item)
    results: list = []
    client.start_stream(callback=lambda result, error: results.append((result, error)))
    client.async_stream_infer("llm", items, enable_empty_final_response=True)
    while (
        not results
        or results[-1][0] is None
        or not results[-1][0].get_response().parameters["triton_final_response"].bool_param
    ):
        assert not results or results[-1][1] is None, results[-1][1]
        time.sleep(0.02)
    client.stop_stream()
    text, ids, reason = "", [], ""
    for result, _ in results:
        if result.get_response().outputs:
            text += result.as_numpy("text_output").reshape(-1)[0].decode()
            ids += result.as_numpy("output_ids").reshape(-1).tolist()
            reason = result.as_numpy("finish_reason").reshape(-1)[0].decode() or reason
    return text, ids, reason


def _prompt_ids(stack, prompt: str) -> int:
    """How many ids the pipeline makes of a raw prompt: `generate`'s own encoding, with its repository's tokenizer."""
    from tritonkit.pipelines.llm.runtime.text import TextCodec

    _, server, _ = stack
    return int(TextCodec(Path(server.repository) / "generate" / "1" / "tokenizer.json").encode(prompt).size)


def _rendered(stack, messages: list[dict]) -> str:
    """The conversation in the model's chat format, from the generation.json the build wrote."""
    found = sorted((stack[0] / "model_repository").glob("*/1/generation.json"))
    return format_chat(GenerationConfig.load(found[0].parent).chat, messages)


def test_models_list_and_retrieve(client):
    assert [m.id for m in client.models.list()] == [MODEL]
    assert client.models.retrieve(MODEL).id == MODEL
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("gpt-4o")


def test_multi_turn_chat_equals_the_pipeline_and_usage_adds_up(stack, client):
    reply = client.chat.completions.create(model=MODEL, messages=CONVERSATION, max_tokens=12, temperature=0)
    prompt = _rendered(stack, CONVERSATION)
    text, ids, reason = _triton(stack, prompt, 12)
    choice = reply.choices[0]
    assert (choice.message.role, choice.message.content, choice.finish_reason) == ("assistant", text, reason)
    assert reply.usage.prompt_tokens == _prompt_ids(stack, prompt)
    assert reply.usage.completion_tokens == len(ids)
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    assert reply.object == "chat.completion" and reply.model == MODEL


def test_streamed_chat_role_first_one_finish_reason_usage_last(client):
    whole = client.chat.completions.create(model=MODEL, messages=CONVERSATION, max_completion_tokens=10, temperature=0)
    chunks = list(client.chat.completions.create(model=MODEL, messages=CONVERSATION, max_completion_tokens=10,
                                                 temperature=0, stream=True, stream_options={"include_usage": True}))
    with_choices = [c for c in chunks if c.choices]
    assert with_choices[0].choices[0].delta.role == "assistant"
    assert all(c.choices[0].delta.role is None for c in with_choices[1:])
    reasons = [c.choices[0].finish_reason for c in with_choices if c.choices[0].finish_reason]
    assert reasons == [whole.choices[0].finish_reason]
    assert with_choices[-1].choices[0].finish_reason is not None
    assert "".join(c.choices[0].delta.content or "" for c in with_choices) == whole.choices[0].message.content
    assert chunks[-1].choices == [] and chunks[-1].usage == whole.usage
    assert all(c.usage is None for c in chunks[:-1])


def test_stream_without_usage_has_none(client):
    chunks = list(client.chat.completions.create(model=MODEL, messages=CONVERSATION[1:2], max_tokens=3, stream=True))
    assert all(c.usage is None and len(c.choices) == 1 for c in chunks)
    assert sum(1 for c in chunks if c.choices[0].finish_reason) == 1


def test_completions_whole_and_streamed(stack, client):
    prompt = "Once upon a time"
    text, ids, reason = _triton(stack, prompt, 9)
    reply = client.completions.create(model=MODEL, prompt=prompt, max_tokens=9, temperature=0)
    assert (reply.choices[0].text, reply.choices[0].finish_reason) == (text, reason)
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (_prompt_ids(stack, prompt), len(ids))
    chunks = list(client.completions.create(model=MODEL, prompt=prompt, max_tokens=9, temperature=0, stream=True,
                                            stream_options={"include_usage": True}))
    assert "".join(c.choices[0].text for c in chunks if c.choices) == text
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == [reason]
    assert chunks[-1].usage == reply.usage


def test_max_tokens_bounds_the_answer(client):
    reply = client.chat.completions.create(model=MODEL, messages=CONVERSATION, max_tokens=3, temperature=0,
                                           stop=["never-in-this-output"])
    assert reply.usage.completion_tokens == 3 and reply.choices[0].finish_reason == "length"


def test_without_max_tokens_the_answer_runs_to_its_end_or_the_context_s(client):
    """As OpenAI's and vLLM's servers do: no 64-token default. An answer a grammar ends after 100 tokens ends with
    `stop`; one whose end tokens are barred fills the tiny GPT's 256-token context and only then ends with `length`."""
    ended = client.chat.completions.create(model=MODEL, messages=CONVERSATION,
                                           extra_body={"structured_outputs": {"regex": "(ab){50}"}})
    assert (ended.choices[0].message.content, ended.choices[0].finish_reason) == ("ab" * 50, "stop")
    assert ended.usage.completion_tokens == 100
    endless = client.chat.completions.create(model=MODEL, messages=CONVERSATION, logit_bias={"256": -100, "258": -100})
    assert endless.choices[0].finish_reason == "length" and endless.usage.total_tokens == 256, endless.usage
    completion = client.completions.create(model=MODEL, prompt="Hello", logit_bias={"256": -100, "258": -100})
    assert completion.choices[0].finish_reason == "length" and completion.usage.total_tokens == 256


def test_greedy_answers_are_the_same_asked_again_and_beside_others(stack, client):
    check_greedy_answers_depend_on_the_chat_alone(client, stack[2], KEY, MODEL, max_tokens=16)


def test_seeded_answers_are_the_same_asked_again_and_in_any_batch_position(stack, client):
    check_seeded_answers_repeat(client, stack[2], KEY, MODEL, max_tokens=16, seeds_differ=False)


def test_async_client_concurrent_requests_match_sync(stack, client):
    expected = client.chat.completions.create(model=MODEL, messages=CONVERSATION, max_tokens=8, temperature=0)

    async def run() -> list:
        async with openai.AsyncOpenAI(base_url=stack[2], api_key=KEY, max_retries=0) as aclient:
            whole = [aclient.chat.completions.create(model=MODEL, messages=CONVERSATION, max_tokens=8, temperature=0)
                     for _ in range(3)]

            async def streamed() -> str:
                stream = await aclient.chat.completions.create(model=MODEL, messages=CONVERSATION, max_tokens=8,
                                                               temperature=0, stream=True)
                return "".join([c.choices[0].delta.content or "" async for c in stream])

            return await asyncio.gather(*whole, streamed(), streamed())

    answers = asyncio.run(run())
    assert [a.choices[0].message.content for a in answers[:3]] == [expected.choices[0].message.content] * 3
    assert answers[3:] == [expected.choices[0].message.content] * 2


@pytest.mark.parametrize(("extra", "param"), [
    ({"max_token": 4}, "max_token"), ({"n": 0}, "n"), ({"logit_bias": {"one": 5}}, "logit_bias"),
    ({"tool_choice": "required"}, "tool_choice"), ({"temperature": 5}, "temperature"),
    ({"top_p": -1}, "top_p"), ({"max_tokens": 0}, "max_tokens"), ({"stop": ["a", "b", "c", "d", "e"]}, "stop"),
    ({"response_format": {"type": "xml"}}, "response_format.type"),
    ({"stream_options": {"include_usage": True}}, "stream_options"),
])
def test_bad_or_unknown_parameters_are_400_naming_them(client, extra, param):
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL, messages=CONVERSATION, extra_body=extra)
    assert caught.value.status_code == 400
    assert caught.value.body["param"] == param and param in caught.value.body["message"]


def test_bad_messages_and_models(client):
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL, messages=[{"role": "robot", "content": "x"}])
    assert caught.value.body["param"] == "messages[0].role"
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL, messages=[{"role": "tool", "content": "x"}])
    assert caught.value.body["param"] == "messages[0].tool_call_id"
    with pytest.raises(openai.NotFoundError) as missing:
        client.chat.completions.create(model="gpt-4o", messages=CONVERSATION)
    assert missing.value.body["code"] == "model_not_found" and MODEL in missing.value.body["message"]
    with pytest.raises(openai.BadRequestError) as unknown:
        client.completions.create(model=MODEL, prompt="x", extra_body={"max_token": 3})
    assert unknown.value.body["param"] == "max_token"


def test_api_key_and_size_limit(stack):
    with pytest.raises(openai.AuthenticationError) as caught:
        openai.OpenAI(base_url=stack[2], api_key="wrong", max_retries=0).models.list()
    assert caught.value.status_code == 401 and "wrong" not in str(caught.value.body)
    log = next(stack[0].glob("gateway-*.log")).read_text()
    assert KEY not in log
    big = openai.OpenAI(base_url=stack[2], api_key=KEY, max_retries=0)
    with pytest.raises(openai.APIStatusError) as too_large:
        big.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "x" * 70000}])
    assert too_large.value.status_code == 413


def test_the_compose_file_gets_the_gateway_service(stack):
    """A spec with a gateway: section builds a compose file whose gateway service reaches Triton by name, mounts the
    repository read-only, publishes on the deploy bind address and passes the key variable through (never a value)."""
    project = stack[0]
    compose = yaml.safe_load((project / "docker-compose.yml").read_text())
    service = compose["services"]["gateway"]
    assert service["command"][:4] == ["--triton", "triton:8001", "--repository", "/models"]
    assert ["--model", f"{MODEL}=llm"] == service["command"][-2:] and "65536" in service["command"]
    assert service["environment"] == ["TRITONKIT_API_KEY"] and service["ports"] == ["127.0.0.1:9100:9100"]
    assert service["volumes"] == ["./model_repository:/models:ro"]
    assert service["depends_on"] == {"triton": {"condition": "service_healthy"}}
    dockerfile = (project / service["build"]["dockerfile"]).read_text()
    assert "COPY tritonkit-wheel/tritonkit-" in dockerfile and 'ENTRYPOINT ["tritonkit", "gateway"]' in dockerfile
    if shutil.which("docker-compose"):
        checked = subprocess.run(["docker-compose", "-f", "docker-compose.yml", "config", "-q"], cwd=project,
                                 capture_output=True, text=True)
        assert checked.returncode == 0, checked.stderr


def test_a_gateway_reading_the_published_repository_from_s3_answers_the_same(stack, client, s3):
    """The sidecar's case: Triton and the gateway read a repository published to S3 (moto); the gateway fetches the
    chat format and tokenizer from the bucket (the endpoint in Triton's s3://HOST:PORT/... form) and answers alike."""
    project, server, _ = stack
    published = run_cli("publish", s3["dest"], "--endpoint-url", s3["endpoint"], cwd=project, timeout=300)
    assert published.returncode == 0, published.stderr
    expected = client.chat.completions.create(model=MODEL, messages=CONVERSATION, max_tokens=6, temperature=0)
    (project / "no-local-copy").mkdir(exist_ok=True)
    with gateway(project / "no-local-copy", server, "--repository", s3["triton"], "--model", f"{MODEL}=llm") as base:
        remote = openai.OpenAI(base_url=base, api_key="unused", max_retries=0)
        reply = remote.chat.completions.create(model=MODEL, messages=CONVERSATION, max_tokens=6, temperature=0)
    assert reply.choices[0].message.content == expected.choices[0].message.content
    assert reply.usage == expected.usage


def test_serve_with_gateway_runs_both_and_stops_both(stack):
    """`tritonkit serve --gateway` (foreground): Triton plus the gateway on --gateway-port; SIGTERM stops both."""
    project = stack[0]
    [port] = quiet_ports(1)
    serve = subprocess.Popen([sys.executable, "-m", "tritonkit", "serve", "--gateway", "--gateway-port", str(port)],
                             cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, max_retries=0)
        deadline = time.monotonic() + 240
        while True:
            try:
                models = [m.id for m in client.models.list()]
                break
            except openai.APIConnectionError:
                assert serve.poll() is None and time.monotonic() < deadline, serve.stderr.read() if serve.stderr else ""
                time.sleep(0.5)
        assert models == [MODEL]   # the spec's gateway: section applies
        assert client.chat.completions.create(model=MODEL, messages=CONVERSATION,
                                              max_tokens=2).usage.completion_tokens == 2
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=60)
    with pytest.raises(openai.APIConnectionError):
        client.models.list()


def test_streams_are_kept_for_the_next_request_and_replaced_after_triton_restarts(stack):
    """The gateway's Triton client keeps a finished request's gRPC stream and writes the next request on it; one
    left early is cancelled, not kept; after Triton restarts on the same port the dead kept stream is replaced and
    the request answered alike. A second Triton on fixed ports over the stack's repository."""
    from tritonkit.gateway.triton import Triton
    from tritonkit.pipelines.llm.gateway.model import ENTRY_MODEL, OUTPUTS, Sampling, request_inputs

    project = stack[0]
    ports = dict(zip(("http_port", "grpc_port", "metrics_port"), quiet_ports(3)))
    inputs = request_inputs(np.array(list(b"Hello there")), Sampling(max_tokens=4, temperature=0.0))

    async def answer(triton: Triton) -> list[int]:
        return [int(i) for r in [r async for r in triton.stream(ENTRY_MODEL, inputs, OUTPUTS)]
                for i in r.as_numpy("token_ids").reshape(-1)]

    async def left_early(triton: Triton) -> None:
        responses = triton.stream(ENTRY_MODEL, inputs, OUTPUTS)
        await anext(responses)
        await responses.aclose()

    async def scenario() -> tuple[list[int], list[int], list[int]]:
        triton = Triton(f"127.0.0.1:{ports['grpc_port']}")
        first = await answer(triton)
        kept = list(triton._idle)
        assert len(kept) == 1
        second = await answer(triton)
        assert triton._idle == kept   # the same stream carried it, and is kept again
        await left_early(triton)
        assert triton._idle == []     # the stream of a request left early is cancelled with it
        await answer(triton)
        kept = list(triton._idle)
        await asyncio.to_thread(restart)
        third = await answer(triton)
        assert len(triton._idle) == 1 and triton._idle != kept
        await triton.close()
        return first, second, third

    servers: list[EmbeddedServer] = []

    def restart() -> None:
        servers.pop().stop()
        servers.append(EmbeddedServer(project / "model_repository", work_dir=project / ".tritonkit-restart",
                                      startup_timeout=240, **ports).start())

    servers.append(EmbeddedServer(project / "model_repository", work_dir=project / ".tritonkit-restart",
                                  startup_timeout=240, **ports).start())
    try:
        first, second, third = asyncio.run(scenario())
    finally:
        for server in servers:
            server.stop()
    assert len(first) == 4 and first == second == third


def test_a_client_leaving_mid_stream_ends_its_generation_and_frees_its_cache(stack):
    """The gateway streams to `generate` itself, so cancelling the gRPC call reaches the generation (Triton 2.51 does
    not pass an ensemble request's cancellation on to the running step): a client reading one event of a LONG-token
    greedy answer and hanging up leaves no live generation and no reserved KV bytes, well before LONG tokens."""
    _, server, base = stack
    conversations = ([{"role": "user", "content": text}] for text in ("Hello", "Triton", "Once upon a time"))
    # a greedy answer running LONG tokens without an end token
    messages = next(m for m in conversations if _triton(stack, _rendered(stack, m), LONG)[2] == "length")
    before = clients.settled_metrics(server.metrics_url)
    where = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(where.netloc, timeout=30)
    body = {"model": MODEL, "messages": messages, "max_tokens": LONG, "temperature": 0, "stream": True}
    connection.request("POST", f"{where.path}/chat/completions", json.dumps(body).encode(),
                       {"Content-Type": "application/json", "Authorization": f"Bearer {KEY}"})
    reply = connection.getresponse()
    assert reply.status == 200
    assert next(line for line in reply if line.startswith(b"data:"))   # the role delta: the first token is out
    connection.sock.shutdown(socket.SHUT_RDWR)
    connection.close()

    def freed() -> bool:
        now = clients.metrics(server.metrics_url)
        return now["llm_generations_live"] == 0 and now["llm_kv_cache_reserved_bytes"] == 0

    assert clients.wait_for(freed, 5.0)
    after = clients.settled_metrics(server.metrics_url)
    assert 1 <= after["llm_generated_tokens_total"] - before["llm_generated_tokens_total"] < LONG
