"""The LLM pipeline served for real (embedded Triton 2.51) on the tiny GPT: streaming over HTTP and gRPC equals
PyTorch, one-response completion, stop strings, max_tokens, seeds, cancellation, the cache budget, 16 streams."""
from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.llm import clients
from tests.llm.conftest import build_repository, write_spec
from tests.llm.reference import tiny_greedy
from tritonkit.pipelines.llm.runtime.assets import GenerationConfig
from tritonkit.pipelines.llm.runtime.chat import format_chat
from tritonkit.pipelines.llm.runtime.text import REPLACEMENT, TextCodec

pytestmark = pytest.mark.server
HELLO = list(b"Hello")  # the byte tokenizer's ids
BUDGET_POSITIONS = 2048  # 1 MiB of tiny-GPT keys+values (512 bytes a position)
#: A tiny-GPT step takes well under a millisecond: at 2 ms a step a 250-token stream runs 0.5 s, long enough for the
#: tests that cancel it, or send more requests, while it runs (10 cancellation polls)
MIN_STEP_S = 0.002
#: A sequence id a client sends to generate (which has no sequence batcher and ignores it), above 2**32.
REUSED = (1 << 40) + 77
PROMPTS = ["Hello", "The capital of France is", "a", "Once upon a time, in a land far away,", "✓ unicode é",
           "12345678901234567890", "xyz", "Triton", "in-flight batching", "KV cache", "?", "tokens", "stream me",
           "GPU-less", "two cores", "sixteen"]


@pytest.fixture(scope="module")
def server(serve, tmp_path_factory):
    spec = write_spec(tmp_path_factory.mktemp("tiny-spec"), "tiny",
                      generate_parameters={"kv_cache_bytes": BUDGET_POSITIONS * 512, "cancel_poll_s": 0.05,
                                           "min_step_s": MIN_STEP_S})
    return serve(build_repository(spec))


@pytest.fixture(scope="module")
def model_dir(server) -> Path:
    """generate's version folder in the built repository (model.onnx, tokenizer.json, generation.json)."""
    return server.repository / "generate" / "1"


@pytest.fixture(scope="module")
def codec(model_dir) -> TextCodec:
    return TextCodec(model_dir / "tokenizer.json")


@pytest.fixture(scope="module")
def eos(model_dir) -> frozenset[int]:
    return frozenset(GenerationConfig.load(model_dir).eos_token_ids)


def assert_clean_stream(result: clients.Result, codec: TextCodec) -> None:
    """Deltas add up to the decoded text; no running response ends inside a character."""
    assert result.error == ""
    assert result.text == codec.decode(result.ids)
    assert all(not t.endswith(REPLACEMENT) for t in result.texts[:-1])


def test_smoke_passes(server):
    from tritonkit.smoke.runner import run_smoke
    from tritonkit.smoke.target import Target

    target = Target(http_url=server.http_url, grpc_url=server.grpc_url)
    results = run_smoke(server.repository, target, ["http", "grpc"])
    failed = [r for r in results if r.status == "fail"]
    assert failed == [], [(r.check, r.model, r.protocol, r.detail) for r in failed]
    assert {"generate", "llm", "llm_complete"} <= {r.model for r in results if r.status == "pass"}


@pytest.mark.parametrize("prompt", ["Hello", "✓ unicode é"])
def test_greedy_streams_equal_pytorch_over_http_and_grpc(server, codec, eos, prompt):
    want = tiny_greedy(list(codec.encode(prompt)), 20, eos)
    body = {"text_input": prompt, "max_tokens": 20}
    over_http = clients.http(server.http_url, "llm", body, stream=True)
    over_grpc = clients.grpc_stream(server.grpc_url, "llm", body)
    for result in (over_http, over_grpc):
        assert result.ids == want
        assert [t for step in result.tokens for t in step] == want   # a response a step: one token, or more drafted
        assert result.finish_reason == ("length" if len(want) == 20 else "stop")
        assert_clean_stream(result, codec)
    complete = clients.http(server.http_url, "llm_complete", body, stream=False)
    assert (complete.ids, complete.text, complete.finish_reason) == (want, over_http.text, over_http.finish_reason)


def test_generate_streams_text_directly(server, codec, eos):
    want = tiny_greedy(list(codec.encode("Hello")), 12, eos)
    body = {"input_ids": [int(i) for i in codec.encode("Hello")], "max_tokens": 12}
    result = clients.http(server.http_url, "generate", body, stream=True, ids="token_ids")
    assert result.ids == want
    assert_clean_stream(result, codec)


def test_max_tokens_from_inputs_or_request_parameters(server):
    by_input = clients.grpc_stream(server.grpc_url, "llm", {"text_input": "Hello", "max_tokens": 5, "ignore_eos": True})
    by_param = clients.http(server.http_url, "llm",
                            {"text_input": "Hello", "parameters": {"max_tokens": 5, "ignore_eos": True}},
                            stream=True)
    assert len(by_input.ids) == 5 and by_input.finish_reason == "length"
    assert by_param.ids == by_input.ids and by_param.finish_reason == "length"


def test_stop_strings_end_the_text_before_them(server, codec):
    prompt = "The capital of France is"  # the tiny GPT answers "szzzzzzzzzzz......"
    free = clients.http(server.http_url, "llm_complete", {"text_input": prompt, "max_tokens": 40, "ignore_eos": True},
                        stream=False)
    text, stop = free.text, "z."  # spans two tokens; every "z" could start it, so each is held one step
    assert stop in text and text.index(stop) > 3
    body = {"text_input": prompt, "max_tokens": 40, "ignore_eos": True, "stop": [stop, "never appears"]}
    streamed = clients.http(server.http_url, "llm", body, stream=True)
    completed = clients.http(server.http_url, "llm_complete", body, stream=False)
    over_grpc = clients.grpc_stream(server.grpc_url, "llm", body)
    for result in (streamed, completed, over_grpc):
        assert result.finish_reason == "stop", result
        assert result.text == text[:text.index(stop)]
        assert stop not in result.text
    assert len(streamed.ids) < 40 and free.ids[:len(streamed.ids)] == streamed.ids


def test_seeded_sampling_reproduces(server):
    body = {"text_input": "Hello", "max_tokens": 24, "ignore_eos": True, "temperature": 3.0, "top_k": 100,
            "top_p": 0.95}
    first = clients.http(server.http_url, "llm", {**body, "seed": 11}, stream=True)
    again = clients.grpc_stream(server.grpc_url, "llm", {**body, "seed": 11})
    complete = clients.http(server.http_url, "llm_complete", {**body, "seed": 11}, stream=False)
    other = clients.http(server.http_url, "llm", {**body, "seed": 12}, stream=True)
    assert len(first.ids) == 24 and first.ids == again.ids == complete.ids
    assert other.ids != first.ids


def test_chat_prompt_uses_the_chat_format(server, codec, model_dir):
    chat = GenerationConfig.load(model_dir).chat
    prompt = format_chat(chat, [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])
    want = clients.grpc_stream(server.grpc_url, "generate", {"input_ids": [int(i) for i in codec.encode(prompt)],
                                                            "max_tokens": 6, "ignore_eos": True},
                               ids="token_ids", outputs=("token_ids", "finish_reason"))
    text = {"text_input": "Hi", "chat": True, "system_prompt": "Be brief.", "max_tokens": 6, "ignore_eos": True}
    got = clients.grpc_stream(server.grpc_url, "llm", text)
    # the ensemble's text goes to generate, which encodes it: a client streaming text from generate can cancel
    direct = clients.grpc_stream(server.grpc_url, "generate", text, ids="token_ids",
                                 outputs=("token_ids", "text_output", "finish_reason"))
    assert got.ids == want.ids == direct.ids and len(got.ids) == 6
    assert direct.text == got.text


def test_bad_requests_get_clear_errors(server):
    too_long = clients.http(server.http_url, "llm", {"text_input": "Hello", "max_tokens": 255}, stream=True)
    assert "exceeds the model's context of 256 tokens" in too_long.error
    bad = clients.grpc_stream(server.grpc_url, "llm", {"text_input": "Hello", "top_p": 2.0})
    assert "top_p must be in (0, 1]" in bad.error
    long_prompt = clients.grpc_stream(server.grpc_url, "generate", {"input_ids": [65] * 300}, ids="token_ids",
                                      outputs=("token_ids",))  # refused whole, never cut to fit
    assert long_prompt.ids == [] and long_prompt.error.startswith("the prompt has 300 tokens")
    assert "shorten the prompt to at most 255 tokens" in long_prompt.error


@pytest.mark.parametrize("model, body, message", [
    ("generate", {"input_ids": HELLO, "temperature": -1.0}, "temperature must be a finite number >= 0"),
    ("generate", {"input_ids": HELLO, "max_tokens": 255}, "exceeds the model's context of 256 tokens"),
    ("generate", {"input_ids": [65] * 300}, "shorten the prompt to at most 255 tokens"),
    ("generate", {"text_input": "A" * 300}, "shorten the prompt to at most 255 tokens"),
    ("generate", {"max_tokens": 4}, "send 'text_input' (or 'input_ids')"),
    ("llm_complete", {"text_input": "A" * 300}, "shorten the prompt to at most 255 tokens"),
])
def test_bad_request_values_are_http_400_from_generate(server, model, body, message):
    """generate (decoupled) answers over HTTP /generate: a refused request is 400 with the reason, not 500."""
    request = urllib.request.Request(f"http://{server.http_url}/v2/models/{model}/generate",
                                     data=json.dumps(body).encode())
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=60)
    assert refused.value.code == 400 and message in refused.value.read().decode()


def test_cancelling_a_stream_frees_its_cache(server):
    before = clients.settled_metrics(server.metrics_url)
    stream = clients.GrpcStream(server.grpc_url)
    stream.send("generate", {"input_ids": HELLO, "max_tokens": 250, "ignore_eos": True}, ["token_ids", "text_output"])
    _, error = stream.next()  # the first token: the generation is running (250 steps take 0.5 s)
    assert error is None
    stream.close(cancel=True)

    def freed() -> bool:
        now = clients.metrics(server.metrics_url)  # gauges are set one after the other: wait for both
        return now["llm_generations_live"] == 0 and now["llm_kv_cache_reserved_bytes"] == 0

    assert clients.wait_for(freed, 5.0)
    after = clients.settled_metrics(server.metrics_url)
    assert after["llm_kv_cache_reserved_bytes"] == 0
    generated = after["llm_generated_tokens_total"] - before["llm_generated_tokens_total"]
    assert 1 <= generated < 250  # stopped early, and stays stopped


def test_requests_sharing_a_sequence_id_run_as_generations_of_their_own(server):
    """generate has no sequence batcher (its own thread steps the generations), so a sequence id means nothing to it:
    a request sending a running generation's id gets its own tokens (Triton 2.51's sequence batcher used to queue it
    into the running sequence, where it was taken for that generation's next step)."""
    first, second = clients.GrpcStream(server.grpc_url), clients.GrpcStream(server.grpc_url)
    try:
        first.send("generate", {"input_ids": HELLO, "max_tokens": 250, "ignore_eos": True}, ["token_ids"],
                   sequence_id=REUSED, sequence_start=True)
        assert first.next()[1] is None  # running (250 steps take 0.5 s)
        second.send("generate", {"input_ids": list(b"xyz"), "max_tokens": 5, "ignore_eos": True}, ["token_ids"],
                    sequence_id=REUSED, sequence_start=True)
        reused = second.collect("token_ids", timeout=30)
    finally:
        first.close(cancel=True)
        second.close(cancel=True)
    alone = clients.grpc_stream(server.grpc_url, "generate",
                                {"input_ids": list(b"xyz"), "max_tokens": 5, "ignore_eos": True},
                                ids="token_ids", outputs=("token_ids",))
    assert reused.error == "" and reused.ids == alone.ids and len(alone.ids) == 5
    assert clients.settled_metrics(server.metrics_url)["llm_kv_cache_reserved_bytes"] == 0


def test_budget_rejects_a_request_that_does_not_fit(server):
    hogs = [clients.GrpcStream(server.grpc_url) for _ in range(8)]  # 8 x (5 + 250) = 2040 of 2048 positions
    try:
        for hog in hogs:
            hog.send("generate", {"input_ids": HELLO, "max_tokens": 250, "ignore_eos": True}, ["token_ids"])
        for hog in hogs:
            assert hog.next()[1] is None
        refused = clients.grpc_stream(server.grpc_url, "llm", {"text_input": "Hello", "max_tokens": 10})
        assert "KV cache budget exceeded" in refused.error and "15 positions" in refused.error
        assert "lower max_tokens" in refused.error
    finally:
        for hog in hogs:
            hog.close(cancel=True)
    settled = clients.settled_metrics(server.metrics_url)  # the hogs' caches are freed once their cancellation is seen
    assert settled["llm_kv_cache_reserved_bytes"] == 0
    accepted = clients.grpc_stream(server.grpc_url, "llm", {"text_input": "Hello", "max_tokens": 10})
    assert accepted.error == "" and len(accepted.ids) >= 1


def test_a_request_naming_no_max_tokens_waits_for_the_budget_and_answers_as_alone(server):
    """Without max_tokens a request reserves the rest of the context (256 positions after "Hello"): while 8 hogs hold
    2040 of the 2048 it waits for them (one naming its max_tokens is refused: the test above), then answers as it
    does alone."""
    alone = clients.grpc_stream(server.grpc_url, "generate", {"input_ids": HELLO}, ids="token_ids",
                                outputs=("token_ids", "finish_reason"))
    assert alone.error == "" and len(alone.ids) > 0
    hogs = [clients.GrpcStream(server.grpc_url) for _ in range(8)]
    waiting = clients.GrpcStream(server.grpc_url)
    try:
        for hog in hogs:
            hog.send("generate", {"input_ids": HELLO, "max_tokens": 250, "ignore_eos": True}, ["token_ids"])
        for hog in hogs:
            assert hog.next()[1] is None
        waiting.send("generate", {"input_ids": HELLO}, ["token_ids", "finish_reason"])
        answered = waiting.collect("token_ids", timeout=60)
    finally:
        for stream in (*hogs, waiting):
            stream.close(cancel=True)
    assert answered.error == "" and answered.ids == alone.ids and answered.finish_reason == alone.finish_reason
    assert clients.settled_metrics(server.metrics_url)["llm_kv_cache_reserved_bytes"] == 0


def test_sixteen_concurrent_streams_equal_their_single_results(server, codec):
    # 40 tokens each, so the streams overlap (a tiny-GPT step takes about a millisecond)
    bodies = [{"text_input": p, "max_tokens": 40,
               **({"temperature": 1.5, "top_k": 40, "seed": i} if i % 3 == 0 else {})}
              for i, p in enumerate(PROMPTS)]
    alone = [clients.grpc_stream(server.grpc_url, "llm", body) for body in bodies]
    before = clients.settled_metrics(server.metrics_url)
    start = threading.Barrier(len(bodies))

    def run(i: int) -> clients.Result:
        start.wait()
        if i % 2:
            return clients.grpc_stream(server.grpc_url, "llm", bodies[i])
        return clients.http(server.http_url, "llm", bodies[i], stream=True)

    with ThreadPoolExecutor(len(bodies)) as pool:
        together = list(pool.map(run, range(len(bodies))))
    after = clients.settled_metrics(server.metrics_url)
    for i, (one, many) in enumerate(zip(alone, together)):
        assert (many.ids, many.text, many.finish_reason) == (one.ids, one.text, one.finish_reason), PROMPTS[i]
        assert_clean_stream(many, codec)
    tokens = after["llm_generated_tokens_total"] - before["llm_generated_tokens_total"]
    steps = after["llm_steps_total"] - before["llm_steps_total"]
    assert tokens == sum(len(r.ids) for r in together)
    assert tokens / steps > 2, f"in-flight batching: {tokens} tokens in {steps} steps"  # 1.0 = none; ~14 idle


def test_the_weights_are_in_one_model_and_every_model_has_its_own_files(server):
    """One model.onnx in the repository (generate's, loaded once per server for streaming and one-shot requests);
    generate encodes and detokenizes itself, so no other model holds a tokenizer copy and a Python stub of its own
    (Triton from s3:// gives no model a sibling's folder)."""
    repository = server.repository
    assert [p.relative_to(repository).as_posix() for p in repository.rglob("model.onnx*")] == ["generate/1/model.onnx"]
    for name in ("tokenizer.json", "generation.json"):
        assert [p.relative_to(repository).as_posix() for p in repository.rglob(name)] == [f"generate/1/{name}"]
    assert sorted(p.name for p in repository.iterdir() if (p / "config.pbtxt").exists()) == [
        "generate", "llm", "llm_complete"]
    # export config_io own: the graph's samples are not its I/O
    assert not (repository / "generate" / "golden").exists()


def test_llm_complete_answers_once_over_http_and_a_grpc_stream(server):
    body = {"text_input": "Hello", "max_tokens": 12, "ignore_eos": True}
    streamed = clients.grpc_stream(server.grpc_url, "llm", body)
    over_http = clients.http(server.http_url, "llm_complete", body, stream=False)
    stream = clients.GrpcStream(server.grpc_url)
    try:
        stream.send("llm_complete", body, ["text_output", "output_ids", "finish_reason"])
        over_grpc = stream.collect()
    finally:
        stream.close()
    assert len(streamed.ids) == 12 and len(streamed.tokens) > 1   # the stream: a response a step
    assert over_http.tokens == over_grpc.tokens == [streamed.ids]  # llm_complete: one response each
    assert over_http.text == over_grpc.text == streamed.text and over_grpc.finish_reason == "length"


def test_four_hundred_one_shot_requests_are_all_answered(server):
    """A BLS forward from a non-decoupled `complete` to `generate` hung after ~230 requests in Triton 2.51; the
    ensemble's step into generate is no BLS call: every request of a long run is answered, over HTTP and gRPC."""
    body = {"text_input": "Hi", "max_tokens": 3, "ignore_eos": True}
    want = clients.http(server.http_url, "llm_complete", body, stream=False)

    def one(i: int) -> clients.Result:
        if i % 2:
            return clients.http(server.http_url, "llm_complete", body, stream=False, timeout=30)
        return clients.grpc_stream(server.grpc_url, "llm_complete", body, timeout=30)

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(one, range(400)))
    assert len(want.ids) == 3 and [r.error for r in results if r.error] == []
    assert all(r.tokens == [want.ids] for r in results)
