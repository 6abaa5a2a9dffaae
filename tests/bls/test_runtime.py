"""The BLS runtime helper outside Triton: declared callees, timeouts, callee errors, stream iteration."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.bls import fake_pb_utils as pb
from tritonkit.pipelines.bls.runtime import Callees, CallError, RequestError, respond


@pytest.fixture(autouse=True)
def fresh_fake():
    pb.models.clear()
    pb.sent.clear()
    yield


def callees(calls: str = "double,count") -> Callees:
    config = {"name": "route", "parameters": {"bls_calls": {"string_value": calls}}}
    return Callees({"model_name": "route", "model_config": json.dumps(config)}, pb)


def double(inputs):
    return [pb.InferenceResponse([pb.Tensor("Y", inputs["X"] * 2)])]


def test_call_returns_outputs_and_sends_the_timeout_in_microseconds() -> None:
    pb.models["double"] = double
    out = callees().call("double", {"X": np.array([1.5], np.float32)}, ["Y"], timeout_s=0.25)
    np.testing.assert_array_equal(out["Y"], [3.0])
    (request,) = pb.sent
    assert (request.model_name, request.outputs, request.options) == ("double", ["Y"], {"timeout": 250_000})


def test_no_timeout_sends_none_and_a_bad_one_is_refused() -> None:
    pb.models["double"] = double
    callees().call("double", {"X": np.zeros(1)}, ["Y"])
    assert pb.sent[0].options == {}
    with pytest.raises(ValueError, match="timeout_s must be positive"):
        callees().call("double", {"X": np.zeros(1)}, ["Y"], timeout_s=0)


def test_undeclared_callee_is_refused_before_any_request() -> None:
    pb.models["negate"] = double
    with pytest.raises(CallError, match=r"'route' declares bls.calls \[double, count\] only; add 'negate'"):
        callees().call("negate", {"X": np.zeros(1)}, ["Y"])
    assert not pb.sent


def test_callee_error_names_the_callee() -> None:
    pb.models["double"] = lambda inputs: [
        pb.InferenceResponse([], pb.TritonError("X must be finite", pb.TritonError.INVALID_ARG))
    ]
    with pytest.raises(CallError) as err:
        callees().call("double", {"X": np.array([np.inf])}, ["Y"])
    assert str(err.value) == "model 'double' called by 'route' failed: X must be finite"
    assert err.value.callee == "double"


def test_callee_that_cannot_take_requests_and_a_missing_output() -> None:
    with pytest.raises(CallError, match="model 'double' called by 'route' failed: .*'double' is not ready"):
        callees().call("double", {"X": np.zeros(1)}, ["Y"])
    pb.models["double"] = double
    with pytest.raises(CallError, match="the response has no output 'Z'"):
        callees().call("double", {"X": np.zeros(1)}, ["Z"])


def test_stream_yields_each_response_and_skips_the_empty_final_one() -> None:
    pb.models["count"] = lambda inputs: (
        [pb.InferenceResponse([pb.Tensor("Y", np.array([i]))]) for i in (1, 2, 3)] + [pb.InferenceResponse([])]
    )
    got = [r["Y"][0] for r in callees().stream("count", {"N": np.array([3])}, ["Y"], timeout_s=1)]
    assert got == [1, 2, 3]
    assert pb.sent[0].options == {"timeout": 1_000_000}


def test_stream_error_midway_is_raised_after_the_responses_before_it() -> None:
    pb.models["count"] = lambda inputs: [pb.InferenceResponse([pb.Tensor("Y", np.array([1]))]),
                                         pb.InferenceResponse([], pb.TritonError("N too big"))]
    stream = callees().stream("count", {"N": np.array([9])}, ["Y"])
    assert next(stream)["Y"][0] == 1
    with pytest.raises(CallError, match="model 'count' called by 'route' failed: N too big"):
        next(stream)


class _Request:
    def __init__(self, value: float) -> None:
        self.value, self.sent = value, []

    def get_response_sender(self):
        return self

    def send(self, response, flags=0):
        self.sent.append((response, flags))


def _answer(request: _Request):
    if request.value < 0:
        raise RequestError("X must be >= 0")
    if request.value == 0:
        raise CallError("route", "double", "Request timeout expired")
    return {"Y": np.array([request.value])}


def test_respond_turns_errors_into_response_errors_with_codes() -> None:
    ok, bad, failed = respond(pb, [_Request(2.0), _Request(-1.0), _Request(0.0)], _answer)
    assert not ok.has_error() and ok.output_tensors()[0].as_numpy()[0] == 2.0
    assert (bad.error().message(), bad.error().code()) == ("X must be >= 0", "INVALID_ARG")
    assert (failed.error().code(), failed.error().message()) == (
        "INTERNAL", "model 'double' called by 'route' failed: Request timeout expired")


def test_respond_for_a_decoupled_model_sends_final_responses() -> None:
    requests = [_Request(2.0), _Request(-1.0)]
    assert respond(pb, requests, _answer, decoupled=True) is None
    assert [flags for r in requests for _, flags in r.sent] == [pb.TRITONSERVER_RESPONSE_COMPLETE_FINAL] * 2
    assert requests[1].sent[0][0].error().message() == "X must be >= 0"
