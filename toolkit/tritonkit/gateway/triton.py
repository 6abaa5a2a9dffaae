"""Triton over tritonclient's asyncio gRPC client. A decoupled model's requests go on ModelStreamInfer streams kept
open and reused, one request at a time each: a request written on an open stream reaches Triton's inference sooner
than one that first opens its stream (benchmarks/gateway.py measures both), and a stream that carries one request is
still cancelled with it when its caller leaves. Kept streams are let go when Triton stops being ready: a Triton
shutting down waits for them (an open stream keeps its last request's model loaded, and the gRPC server's shutdown
waits for open calls), so `tritonkit stop` would otherwise end in SIGKILL after the exit timeout."""
import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping

import grpc
import numpy as np
import tritonclient.grpc.aio as aio
from tritonclient.grpc import InferInput, InferRequestedOutput, InferResult
from tritonclient.utils import InferenceServerException, np_to_triton_dtype

from tritonkit.gateway.errors import ApiError, from_triton

#: Asks Triton to mark a decoupled model's last response (an empty one when the model sends none with the flag).
FINAL_FLAG = {"triton_enable_empty_final_response": True}
#: Idle streams kept for the next requests; more than this many requests ending at once close their streams.
IDLE_STREAMS = 16
#: Seconds between readiness checks while streams are kept (Triton counts its exit timeout in whole seconds).
WATCH_S = 0.5


def tensor(name: str, value: np.ndarray) -> InferInput:
    """A batch-of-one request input from `value` (shape without the batch dimension)."""
    array = np.asarray(value)[None]
    dtype = "BYTES" if array.dtype == np.object_ else np_to_triton_dtype(array.dtype)
    item = InferInput(name, list(array.shape), dtype)
    item.set_data_from_numpy(array)
    return item


def _is_final(result: InferResult) -> bool:
    flag = result.get_response().parameters.get("triton_final_response")
    return bool(flag is not None and flag.bool_param)


#: What gRPC's client says when it made no connection at all (nothing listens there, or an HTTP/1.1 server does).
NO_CONNECTION = ("failed to connect to all addresses", "http1.x server")


def _unfinished(model: str) -> ApiError:
    return ApiError(502, f"model '{model}' ended its stream without a final response", kind="server_error")


class _Stream:
    """One ModelStreamInfer call kept open: the requests put in it are written in turn on the same HTTP/2 stream."""

    def __init__(self, client: aio.InferenceServerClient) -> None:
        self._requests: asyncio.Queue[dict] = asyncio.Queue()
        self._call = client.stream_infer(self._written())

    async def _written(self) -> AsyncIterator[dict]:
        while True:
            yield await self._requests.get()

    def send(self, request: dict) -> None:
        self._requests.put_nowait(request)

    async def receive(self) -> tuple[InferResult | None, InferenceServerException | None]:
        return await anext(self._call)

    def cancel(self) -> None:
        self._call.cancel()


class Triton:
    """The server the gateway fronts, at a gRPC `host:port`."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.client = aio.InferenceServerClient(url)
        self._idle: list[_Stream] = []
        self._watch: asyncio.Task[None] | None = None

    async def close(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
        self._release()
        await self.client.close()

    def _release(self) -> None:
        for stream in self._idle:
            stream.cancel()
        self._idle.clear()

    def _keep(self, stream: _Stream) -> None:
        """Keeps a finished request's stream for the next one, watched for as long as any stream is kept."""
        self._idle.append(stream)
        if self._watch is None or self._watch.done():
            self._watch = asyncio.create_task(self._release_when_not_ready())

    async def _release_when_not_ready(self) -> None:
        """Lets the kept streams go as soon as Triton is not ready (shutting down, or gone)."""
        while self._idle:
            await asyncio.sleep(WATCH_S)
            try:
                ready = await self.client.is_server_ready(client_timeout=2 * WATCH_S)
            except InferenceServerException:
                ready = False
            if not ready:
                self._release()

    def cannot_reach(self, detail: str) -> ApiError:
        """OpenAI's 503 for a Triton the gateway made no connection to, naming its address."""
        return ApiError(503, f"cannot reach Triton's gRPC endpoint at {self.url}: {detail}", kind="server_error",
                        code="triton_unreachable")

    def _ended(self, error: grpc.RpcError, model: str) -> ApiError:
        """A stream gRPC itself ended (Triton stopped or restarted, or was never reached): OpenAI's 503."""
        if any(marker in (error.details() or "") for marker in NO_CONNECTION):
            return self.cannot_reach(error.details())
        return ApiError(503, f"model '{model}': Triton at {self.url} ended the stream: {error.code()}: "
                        f"{error.details()}", kind="server_error", code="model_unavailable")

    async def ready_models(self) -> set[str]:
        """Names of the models Triton reports READY; a 503 naming the address when it does not answer."""
        try:
            index = await self.client.get_model_repository_index(as_json=True)
        except InferenceServerException as exc:
            raise self.cannot_reach(exc.message() or str(exc)) from None
        return {m["name"] for m in index.get("models", []) if m.get("state") == "READY"}

    async def infer(self, model: str, inputs: Mapping[str, np.ndarray]) -> InferResult:
        """One request to a model that answers once."""
        try:
            return await self.client.infer(model, [tensor(k, v) for k, v in inputs.items()])
        except InferenceServerException as exc:
            if any(marker in (exc.message() or "") for marker in NO_CONNECTION):
                raise self.cannot_reach(exc.message() or "") from None
            raise from_triton(exc, model) from None

    async def _first(self, request: dict, model: str) -> tuple[_Stream, InferResult]:
        """The stream `request` went on and its first response. A kept stream that gRPC has ended meanwhile (Triton
        restarted) answers nothing: the request goes once more on a new stream."""
        while True:
            reused = bool(self._idle)
            stream = self._idle.pop() if reused else _Stream(self.client)
            stream.send(request)
            try:
                result, error = await stream.receive()
            except (grpc.RpcError, StopAsyncIteration) as exc:
                if reused:
                    continue
                if isinstance(exc, StopAsyncIteration):
                    raise _unfinished(model) from None
                raise self._ended(exc, model) from None
            except BaseException:
                stream.cancel()
                raise
            if error is not None:
                stream.cancel()
                raise from_triton(error, model)
            assert result is not None
            return stream, result

    async def stream(self, model: str, inputs: Mapping[str, np.ndarray],
                     outputs: Iterable[str] = ()) -> AsyncGenerator[InferResult, None]:
        """The responses of one request to a decoupled model (asking for `outputs` only, when given), up to its final
        one. Leaving early (the HTTP client went away, or the caller stops reading) cancels the gRPC call, which
        cancels the request in Triton; a stream whose request ended with its final response is kept for the next
        request."""
        request = {"model_name": model, "inputs": [tensor(k, v) for k, v in inputs.items()],
                   "outputs": [InferRequestedOutput(name) for name in outputs] or None,
                   "parameters": dict(FINAL_FLAG)}
        stream, result = await self._first(request, model)
        finished = False
        try:
            while True:
                if result.get_response().outputs:
                    yield result
                if _is_final(result):
                    finished = True
                    return
                answer, error = await stream.receive()
                if error is not None:
                    raise from_triton(error, model)
                assert answer is not None
                result = answer
        except StopAsyncIteration:
            raise _unfinished(model) from None
        except grpc.RpcError as exc:
            raise self._ended(exc, model) from None
        finally:
            if finished and len(self._idle) < IDLE_STREAMS:
                self._keep(stream)
            else:
                stream.cancel()
