"""One interface over tritonclient's HTTP and gRPC clients, so every check runs the same on both."""
import json
import queue
import urllib.request
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from google.protobuf import json_format
from tritonclient.utils import InferenceServerException, np_to_triton_dtype

from tritonkit.triton.model_config import pb

Tensors = dict[str, np.ndarray]


@dataclass(frozen=True)
class Sequence:
    """Sequence-batching parameters of one request."""

    sequence_id: int
    start: bool
    end: bool


class Client(Protocol):
    """What the smoke checks need from a protocol."""

    protocol: str

    def live(self) -> bool: ...
    def ready(self) -> bool: ...
    def model_ready(self, model: str) -> bool: ...
    def config(self, model: str) -> pb.ModelConfig: ...
    def metadata(self, model: str) -> dict[str, Any]: ...
    def infer(self, model: str, inputs: Tensors, outputs: list[str], sequence: Sequence | None = None) -> Tensors: ...
    def stream(self, model: str, inputs: Tensors, outputs: list[str], timeout: float = 60.0) -> list[Tensors]: ...
    def close(self) -> None: ...


def _infer_inputs(module: Any, inputs: Tensors) -> list[Any]:
    """`inputs` as `module`'s (tritonclient.http or .grpc) InferInput list (HTTP sends binary tensor data)."""
    return [module.InferInput(name, list(value.shape), np_to_triton_dtype(value.dtype)).set_data_from_numpy(value)
            for name, value in inputs.items()]


class HttpClient:
    """tritonclient.http, plus the generate_stream endpoint for decoupled models."""

    protocol = "http"

    def __init__(self, url: str, timeout: float = 60.0, versions: dict[str, int] | None = None) -> None:
        """`versions` pins requests to a model to one version (rollout checks a candidate next to the live one)."""
        self.url = url
        self.timeout = timeout
        self.versions = versions or {}
        self.client = httpclient.InferenceServerClient(url, connection_timeout=timeout, network_timeout=timeout)

    def live(self) -> bool:
        return self.client.is_server_live()

    def ready(self) -> bool:
        return self.client.is_server_ready()

    def model_ready(self, model: str) -> bool:
        return self.client.is_model_ready(model)

    def config(self, model: str) -> pb.ModelConfig:
        return json_format.ParseDict(self.client.get_model_config(model), pb.ModelConfig(), ignore_unknown_fields=True)

    def metadata(self, model: str) -> dict[str, Any]:
        return self.client.get_model_metadata(model)

    def infer(self, model: str, inputs: Tensors, outputs: list[str], sequence: Sequence | None = None) -> Tensors:
        result = self.client.infer(model, _infer_inputs(httpclient, inputs),
                                   model_version=str(self.versions.get(model, "")),
                                   outputs=[httpclient.InferRequestedOutput(o) for o in outputs],
                                   **_sequence_kwargs(sequence))
        return {o: result.as_numpy(o) for o in outputs}

    def stream(self, model: str, inputs: Tensors, outputs: list[str], timeout: float = 60.0) -> list[Tensors]:
        """Streams through `/v2/models/<model>/generate_stream` (server-sent events), one dict per response."""
        body = json.dumps({name: _json_value(value) for name, value in inputs.items()})
        request = urllib.request.Request(f"http://{self.url}/v2/models/{model}/generate_stream", data=body.encode(),
                                         headers={"Content-Type": "application/json"})
        responses: list[Tensors] = []
        with urllib.request.urlopen(request, timeout=timeout) as reply:  # noqa: S310 - URL built from the target
            for raw in reply:
                line = raw.decode().strip()
                if not line.startswith("data:"):
                    continue
                event = json.loads(line[len("data:"):])
                if "error" in event:
                    raise InferenceServerException(event["error"])
                present = {o: np.atleast_1d(np.array(event[o])) for o in outputs if o in event}
                if present:
                    responses.append(present)
        return responses

    def close(self) -> None:
        self.client.close()


class GrpcClient:
    """tritonclient.grpc, with bidirectional streaming for decoupled models."""

    protocol = "grpc"

    def __init__(self, url: str, timeout: float = 60.0) -> None:
        self.url = url
        self.timeout = timeout
        self.client = grpcclient.InferenceServerClient(url)

    def live(self) -> bool:
        return self.client.is_server_live(client_timeout=self.timeout)

    def ready(self) -> bool:
        return self.client.is_server_ready(client_timeout=self.timeout)

    def model_ready(self, model: str) -> bool:
        return self.client.is_model_ready(model, client_timeout=self.timeout)

    def config(self, model: str) -> pb.ModelConfig:
        return self.client.get_model_config(model, client_timeout=self.timeout).config

    def metadata(self, model: str) -> dict[str, Any]:
        metadata = self.client.get_model_metadata(model, client_timeout=self.timeout)
        return json_format.MessageToDict(metadata, preserving_proto_field_name=True)

    def infer(self, model: str, inputs: Tensors, outputs: list[str], sequence: Sequence | None = None) -> Tensors:
        result = self.client.infer(
            model, _infer_inputs(grpcclient, inputs), outputs=[grpcclient.InferRequestedOutput(o) for o in outputs],
            client_timeout=self.timeout, **_sequence_kwargs(sequence),
        )
        return {o: result.as_numpy(o) for o in outputs}

    def stream(self, model: str, inputs: Tensors, outputs: list[str], timeout: float = 60.0) -> list[Tensors]:
        """One streamed request; returns every non-empty response up to the final-response flag."""
        events: queue.Queue = queue.Queue()
        self.client.start_stream(callback=lambda result, error: events.put((result, error)))
        try:
            self.client.async_stream_infer(
                model, _infer_inputs(grpcclient, inputs), outputs=[grpcclient.InferRequestedOutput(o) for o in outputs],
                enable_empty_final_response=True,
            )
            responses: list[Tensors] = []
            while True:
                try:
                    result, error = events.get(timeout=timeout)
                except queue.Empty:
                    raise TimeoutError(f"no final response within {timeout:g} s "
                                       f"({len(responses)} responses so far)") from None
                if error is not None:
                    raise error
                response = result.get_response()
                if response.outputs:
                    responses.append({o: result.as_numpy(o) for o in outputs if result.as_numpy(o) is not None})
                final = response.parameters.get("triton_final_response")
                if final is not None and final.bool_param:
                    return responses
        finally:
            self.client.stop_stream()

    def close(self) -> None:
        self.client.close()


#: gRPC codes the client library itself produces when a connection fails, times out or is cut.
_TRANSPORT_CODES = {f"StatusCode.{code}" for code in ("UNAVAILABLE", "DEADLINE_EXCEEDED", "CANCELLED", "UNKNOWN")}


def rejected_by_server(exc: Exception) -> bool:
    """Whether `exc` is the server refusing a request, not a connection that failed on the way.

    Over HTTP, an error status that carries Triton's JSON error body (a body tritonclient cannot decode
    leaves `debug_details`); over gRPC, a status code that only a server sends.
    """
    if not isinstance(exc, InferenceServerException):
        return False  # e.g. ConnectionRefusedError, ConnectionResetError from the HTTP client
    status = exc.status() or ""
    if status.isdigit():
        return 400 <= int(status) < 600 and exc.debug_details() is None
    return status.startswith("StatusCode.") and status not in _TRANSPORT_CODES


def _json_value(value: np.ndarray) -> Any:
    """A tensor as the generate endpoint takes it: a scalar for one element, nested lists otherwise, text for bytes."""
    if value.dtype == object:
        texts = [v.decode() if isinstance(v, bytes) else v for v in value.reshape(-1)]
        value = np.array(texts, dtype=object).reshape(value.shape)
    return value.reshape(-1).tolist()[0] if value.size == 1 else value.tolist()


def _sequence_kwargs(sequence: Sequence | None) -> dict[str, Any]:
    if sequence is None:
        return {}
    return {"sequence_id": sequence.sequence_id, "sequence_start": sequence.start, "sequence_end": sequence.end}


def open_client(protocol: str, url: str) -> Client:
    """A client for `protocol` ('http' or 'grpc') at `url` (host:port)."""
    return HttpClient(url) if protocol == "http" else GrpcClient(url)
