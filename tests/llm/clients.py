"""Small clients for the LLM tests: HTTP generate / generate_stream, gRPC streams (with cancellation), metrics."""
from __future__ import annotations

import json
import queue
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tritonclient.grpc as grpcclient

from tritonkit.pipelines.llm.tune.stream import grpc_inputs  # noqa: F401 (the tests' inputs are the tuner's)


@dataclass
class Result:
    """One request's responses: token ids and text per response, the finish reason, or the error."""

    tokens: list[list[int]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    finish_reason: str = ""
    error: str = ""

    @property
    def ids(self) -> list[int]:
        return [t for step in self.tokens for t in step]

    @property
    def text(self) -> str:
        return "".join(self.texts)


def _ids(value: Any) -> list[int]:
    return [int(v) for v in np.atleast_1d(np.asarray(value)).reshape(-1)]


def http(url: str, model: str, body: dict[str, Any], stream: bool, ids: str = "output_ids",
         timeout: float = 120.0) -> Result:
    """POST /v2/models/<model>/generate or generate_stream with a JSON body."""
    endpoint = "generate_stream" if stream else "generate"
    request = urllib.request.Request(f"http://{url}/v2/models/{model}/{endpoint}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    result = Result()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            events = (
                [json.loads(line[5:]) for line in reply if line.startswith(b"data:")]
                if stream
                else [json.loads(reply.read())]
            )
    except urllib.error.HTTPError as exc:
        payload = exc.read().decode()
        result.error = payload[payload.find("{") :] if "{" in payload else payload
        return result
    for event in events:
        if "error" in event:
            result.error = event["error"]
            break
        result.tokens.append(_ids(event.get(ids, [])))
        result.texts.append(event.get("text_output", ""))
        result.finish_reason = event.get("finish_reason", "") or result.finish_reason
    return result


class GrpcStream:
    """One bidirectional stream: send requests, read responses in order, optionally cancel."""

    def __init__(self, url: str) -> None:
        self.client = grpcclient.InferenceServerClient(url)
        self.events: queue.Queue = queue.Queue()
        self.client.start_stream(callback=lambda result, error: self.events.put((result, error)))

    def send(self, model: str, values: dict[str, Any], outputs: list[str], parameters: dict[str, Any] | None = None,
             request_id: str = "", sequence_id: int = 0, sequence_start: bool = False) -> None:
        self.client.async_stream_infer(model, grpc_inputs(values),
                                       outputs=[grpcclient.InferRequestedOutput(o) for o in outputs],
                                       request_id=request_id, parameters=parameters, enable_empty_final_response=True,
                                       sequence_id=sequence_id, sequence_start=sequence_start)

    def next(self, timeout: float = 60.0) -> tuple[Any, Any]:
        return self.events.get(timeout=timeout)

    def collect(self, ids: str = "output_ids", timeout: float = 120.0) -> Result:
        """Reads one request's responses up to its final one."""
        result = Result()
        while True:
            response, error = self.next(timeout)
            if error is not None:
                result.error = str(error)
                return result
            if response.get_response().outputs:
                result.tokens.append(_ids(response.as_numpy(ids)))
                text = response.as_numpy("text_output")
                result.texts.append(text.reshape(-1)[0].decode() if text is not None else "")
                reason = response.as_numpy("finish_reason")
                if reason is not None and reason.reshape(-1)[0]:
                    result.finish_reason = reason.reshape(-1)[0].decode()
            final = response.get_response().parameters.get("triton_final_response")
            if final is not None and final.bool_param:
                return result

    def close(self, cancel: bool = False) -> None:
        self.client.stop_stream(cancel_requests=cancel)
        self.client.close()


def grpc_stream(url: str, model: str, values: dict[str, Any], ids: str = "output_ids",
                outputs: tuple[str, ...] = ("text_output", "output_ids", "finish_reason"), timeout: float = 120.0,
                **kwargs: Any) -> Result:
    stream = GrpcStream(url)
    ended = False
    try:
        stream.send(model, values, list(outputs), **kwargs)
        result = stream.collect(ids, timeout)
        ended = True
        return result
    finally:
        stream.close(cancel=not ended)  # a stream that never ended would keep stop_stream waiting forever


def metrics(url: str) -> dict[str, float]:
    """The generate model's llm_* gauges and counters from Triton's /metrics."""
    text = urllib.request.urlopen(f"http://{url}/metrics", timeout=10).read().decode()
    return {line.split("{")[0]: float(line.split()[-1]) for line in text.splitlines() if line.startswith("llm_")}


def wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def settled_metrics(url: str) -> dict[str, float]:
    """The generate model's metrics once idle and published (it flushes its counters every cancel_poll_s)."""
    previous = metrics(url)
    for _ in range(50):
        time.sleep(0.15)
        current = metrics(url)
        if current == previous and current["llm_generations_live"] == 0:
            return current
        previous = current
    raise AssertionError(f"metrics did not settle: {previous}")
