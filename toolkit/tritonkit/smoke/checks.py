"""The smoke checks, each producing result rows; they call the server only through `clients.Client`."""
import time
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Literal

import numpy as np

from tritonkit.golden import GoldenCase, Tensors, read_cases, read_tolerances, tolerance_for
from tritonkit.smoke import inputs as made_up
from tritonkit.smoke.clients import Client, Sequence, rejected_by_server
from tritonkit.smoke.compare import (
    config_differences,
    declared_mismatches,
    fallback_for,
    metadata_differences,
    value_mismatch,
)
from tritonkit.triton.model_config import pb

Status = Literal["pass", "fail", "skip"]
UNKNOWN_MODEL = "tritonkit_smoke_no_such_model"
#: `CheckResult.served_as` of a model that runs on tritonkit's onnxruntime fallback, not its declared backend.
FALLBACK = "onnxruntime fallback"


@dataclass
class CheckResult:
    """One row of the smoke report."""

    check: str
    model: str
    protocol: str
    status: Status
    detail: str
    seconds: float
    served_as: str = ""  # FALLBACK when the server runs the model through the fallback, else empty


    def as_dict(self) -> dict:
        return asdict(self)


def timed(check: str, model: str, protocol: str, body: Callable[[], str | None]) -> CheckResult:
    """Runs `body`; None or a message means pass; an exception or a returned 'FAIL: ...' means fail."""
    start = time.perf_counter()
    try:
        message = body() or "ok"
        status: Status = "fail" if message.startswith("FAIL: ") else "skip" if message.startswith("SKIP: ") else "pass"
        message = message.removeprefix("FAIL: ").removeprefix("SKIP: ")
    except Exception as exc:  # noqa: BLE001 - any client error is a failed check, reported in one line
        status, message = "fail", f"{type(exc).__name__}: {whole_message(exc)}"
    return CheckResult(check, model, protocol, status, message, round(time.perf_counter() - start, 3))


def _verdict(problems: list[str], ok: str) -> str:
    return "FAIL: " + "; ".join(problems) if problems else ok


def whole_message(exc: BaseException) -> str:
    """The exception's whole message on one line: a failure is shown in full, not cut at its first line."""
    return " ".join(str(exc).split())


def check_server(client: Client) -> CheckResult:
    def body() -> str:
        if not client.live():
            return "FAIL: server is not live"
        return "live and ready" if client.ready() else "FAIL: server is live but not ready"
    return timed("server", "-", client.protocol, body)


def check_model_ready(client: Client, model: str) -> CheckResult:
    return timed("ready", model, client.protocol,
                 lambda: None if client.model_ready(model) else "FAIL: model is not ready")


def check_callees_ready(client: Client, model: str, callees: list[str]) -> CheckResult:
    """A BLS model answers only while the models it declares in bls.calls are ready too."""
    def body() -> str:
        missing = [c for c in callees if not client.model_ready(c)]
        if missing:
            return f"FAIL: model '{model}' calls {', '.join(repr(c) for c in missing)}, which is not ready"
        return f"calls {', '.join(callees)}: ready"
    return timed("callees-ready", model, client.protocol, body)


def check_config(client: Client, model: str, expected: pb.ModelConfig) -> tuple[CheckResult, bool]:
    """The config row, and whether the served config shows tritonkit's onnxruntime fallback."""
    fallback: list[str] = []

    def body() -> str | None:
        served = client.config(model)
        diffs = config_differences(expected, served)
        if diffs:
            return "FAIL: " + "; ".join(diffs)
        declared = fallback_for(expected, served)
        if declared:
            fallback.append(declared)
            return f"ok; served through tritonkit's {FALLBACK} (Python backend), not '{declared}'"
        return None
    return timed("config", model, client.protocol, body), bool(fallback)


def check_metadata(client: Client, model: str, expected: pb.ModelConfig) -> CheckResult:
    return timed("metadata", model, client.protocol,
                 lambda: _verdict(metadata_differences(expected, client.metadata(model)), "ok"))


Tolerance = Callable[[str], dict[str, float]]


def _mismatches(tolerance: Tolerance, expected: dict[str, np.ndarray], actual: dict[str, np.ndarray]) -> list[str]:
    found = [value_mismatch(name, want, actual.get(name), tol["atol"], tol["rtol"])
             for name, want in expected.items() for tol in [tolerance(name)]]
    return [problem for problem in found if problem]


def _batch(config: pb.ModelConfig, inputs: Tensors) -> int | None:
    """A batching model's batch size in this request: its inputs' first dimension (None: it does not batch)."""
    return next((v.shape[0] for v in inputs.values() if v.ndim), None) if config.max_batch_size > 0 else None


def _declared_in_stream(client: Client, config: pb.ModelConfig, inputs: Tensors, responses: list[Tensors]) -> list[str]:
    """Each streamed response's outputs against the config; none over HTTP, whose JSON events carry neither shapes
    nor data types."""
    if client.protocol == "http":
        return []
    return [f"response {k}: {p}" for k, got in enumerate(responses)
            for p in declared_mismatches(config, got, _batch(config, inputs), every=False)]


def _sequence_ids(model: str, case: str) -> tuple[int, int]:
    """Two 64-bit correlation ids above 2**32, so a 32-bit CORRID path would show.

    tritonclient's gRPC client sends sequence ids as int64, so ids stay below 2**63.
    """
    base = (1 << 40) + (zlib.crc32(f"{model}/{case}".encode()) << 8)
    return base + 1, base + 2


def _shaped_like(expected: Tensors, served: Tensors) -> Tensors:
    """HTTP generate_stream answers in JSON, which carries no shapes (a one-element tensor comes back a scalar):
    a served value holding as many elements as expected takes the expected shape, so its values are compared."""
    return {n: v.reshape(expected[n].shape) if n in expected and v.size == expected[n].size else v
            for n, v in served.items()}


def run_golden_case(client: Client, model: str, config: pb.ModelConfig, tolerances: dict,
                    case: GoldenCase) -> CheckResult:
    """Replays one golden case (a request, two interleaved sequences, or a stream); `tolerances` is its folder's."""
    outputs = [t.name for t in config.output]
    tolerance: Tolerance = partial(tolerance_for, tolerances, case)

    def request() -> str | None:
        inputs, expected = case.steps[0]
        got = client.infer(model, inputs, outputs)
        problems = declared_mismatches(config, got, _batch(config, inputs)) + _mismatches(tolerance, expected, got)
        return _verdict(problems, f"{len(expected)} outputs match")

    def sequences() -> str | None:
        ids = _sequence_ids(model, case.name)
        last = len(case.steps) - 1
        problems = []
        for k, (inputs, expected) in enumerate(case.steps):
            for seq_id in ids:  # interleave the two sequences step by step
                got = client.infer(model, inputs, outputs, Sequence(seq_id, start=k == 0, end=k == last))
                problems += [f"sequence {seq_id} step {k}: {p}" for p in
                             declared_mismatches(config, got, _batch(config, inputs))
                             + _mismatches(tolerance, expected, got)]
        return _verdict(problems[:3], f"2 interleaved sequences x {len(case.steps)} steps match")

    def stream() -> str | None:
        inputs, _ = case.steps[0]
        if client.protocol == "http" and any(v.size > 1 for v in inputs.values()):
            return "SKIP: generate_stream takes scalar inputs; covered over gRPC"
        got = client.stream(model, inputs, outputs)
        if len(got) != len(case.responses):
            return f"FAIL: expected {len(case.responses)} streamed responses, got {len(got)}"
        if client.protocol == "http":
            got = [_shaped_like(want, have) for want, have in zip(case.responses, got)]
        problems = _declared_in_stream(client, config, inputs, got)
        problems += [p for want, have in zip(case.responses, got) for p in _mismatches(tolerance, want, have)]
        return _verdict(problems[:3], f"{len(got)} streamed responses match")

    body = {"request": request, "sequence": sequences, "stream": stream}[case.kind]
    return timed(f"{case.kind}:{case.name}", model, client.protocol, body)


def run_generated(client: Client, model: str, config: pb.ModelConfig) -> CheckResult:
    """Without golden samples: made-up inputs, checking every output arrives with the declared type and shape."""
    outputs = [t.name for t in config.output]
    inputs = made_up.generated_inputs(config)

    def check_shapes(got: dict[str, np.ndarray]) -> list[str]:
        return declared_mismatches(config, got, _batch(config, inputs))

    def body() -> str | None:
        if config.model_transaction_policy.decoupled:
            if client.protocol == "http" and any(v.size > 1 for v in inputs.values()):
                return "SKIP: generate_stream takes scalar inputs; covered over gRPC"
            responses = client.stream(model, inputs, outputs)  # returns only on the final flag / end of stream
            if not responses:
                return "FAIL: the stream completed without a single response"
            return _verdict(_declared_in_stream(client, config, inputs, responses)[:3],
                            f"stream of {len(responses)} responses completed (no golden samples to compare)")
        if config.HasField("sequence_batching"):
            seq_id = _sequence_ids(model, "generated")[0]
            problems = []
            for k in range(3):
                problems += check_shapes(client.infer(model, inputs, outputs, Sequence(seq_id, k == 0, k == 2)))
            return _verdict(problems, "3-step sequence answered (no golden samples to compare)")
        problems = check_shapes(client.infer(model, inputs, outputs))
        return _verdict(problems, "outputs have the declared types and shapes (no golden samples to compare)")

    return timed("infer:generated", model, client.protocol, body)


def behaviour_checks(client: Client, model: str, config: pb.ModelConfig, model_dir: Path) -> list[CheckResult]:
    """Golden cases when the model has them, else one generated request."""
    golden_dir = model_dir / "golden"
    cases = read_cases(golden_dir) if golden_dir.is_dir() else []
    if not cases:
        return [run_generated(client, model, config)]
    tolerances = read_tolerances(golden_dir)  # once per folder, not per case, output, step or response
    return [run_golden_case(client, model, config, tolerances, case) for case in cases]


def pick_negative_target(configs: dict[str, pb.ModelConfig]) -> str | None:
    """A plain request/response model with required inputs, on which bad requests are tried."""
    for name, c in configs.items():
        required = [t for t in c.input if not t.optional]
        if required and not c.model_transaction_policy.decoupled and not c.HasField("sequence_batching"):
            return name
    return None


def negative_checks(client: Client, model: str | None, config: pb.ModelConfig | None) -> list[CheckResult]:
    """Bad requests must get a clean error, and the server must stay healthy afterwards."""
    protocol = client.protocol
    unknown = partial(client.infer, UNKNOWN_MODEL, {}, [])
    results = [timed("negative:unknown-model", UNKNOWN_MODEL, protocol, partial(_expect_error, unknown))]
    if model is not None and config is not None:
        good = made_up.generated_inputs(config)
        outputs = [t.name for t in config.output]
        for label, bad in (("wrong-dtype", made_up.with_wrong_dtype(good)),
                           ("wrong-shape", made_up.with_wrong_shape(good)),
                           ("missing-input", made_up.without_first_input(good))):
            request = partial(client.infer, model, bad, outputs)
            check = partial(_expect_error, request, partial(client.model_ready, model))
            results.append(timed(f"negative:{label}", model, protocol, check))
    results.append(timed("healthy-after-errors", "-", protocol, lambda: None if client.live() and client.ready()
                         else "FAIL: server unhealthy after bad requests"))
    return results


def _expect_error(call: Callable[[], object], model_ready: Callable[[], bool] | None = None) -> str:
    """Passes only when the server itself refuses; a refused or cut connection is a failure.

    With `model_ready`, a refusal counts only while the model is ready: a server refuses every request for a model
    that is not, so the bad request would pass untested; the row is skipped with the reason instead.
    """
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the point is that the server refused
        first = whole_message(exc) or type(exc).__name__
        if rejected_by_server(exc):
            if model_ready is not None and not model_ready():
                return f"SKIP: the model is not ready, so its refusal does not test this request: {first}"
            return f"rejected: {first}"
        return f"FAIL: no answer from the server, so no rejection: {type(exc).__name__}: {first}"
    return "FAIL: the server accepted a bad request"
