"""Triton over tritonclient's asyncio gRPC client: one stream per request, cancelled when its caller leaves."""
from collections.abc import AsyncGenerator, AsyncIterator, Mapping

import numpy as np
import tritonclient.grpc.aio as aio
from tritonclient.grpc import InferInput, InferResult
from tritonclient.utils import InferenceServerException, np_to_triton_dtype

from tritonkit.gateway.errors import ApiError, from_triton

#: Asks Triton to mark a decoupled model's last response (an empty one when the model sends none with the flag).
FINAL_FLAG = {"triton_enable_empty_final_response": True}


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


class Triton:
    """The server the gateway fronts, at a gRPC `host:port`."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.client = aio.InferenceServerClient(url)

    async def close(self) -> None:
        await self.client.close()

    async def ready_models(self) -> set[str]:
        """Names of the models Triton reports READY (empty when it cannot be reached)."""
        try:
            index = await self.client.get_model_repository_index(as_json=True)
        except InferenceServerException:
            return set()
        return {m["name"] for m in index.get("models", []) if m.get("state") == "READY"}

    async def infer(self, model: str, inputs: Mapping[str, np.ndarray]) -> InferResult:
        """One request to a model that answers once."""
        try:
            return await self.client.infer(model, [tensor(k, v) for k, v in inputs.items()])
        except InferenceServerException as exc:
            raise from_triton(exc, model) from None

    async def stream(self, model: str, inputs: Mapping[str, np.ndarray]) -> AsyncGenerator[InferResult, None]:
        """The responses of one request to a decoupled model, up to its final one. Leaving early (the HTTP client
        went away, or the caller stops reading) cancels the gRPC call, which cancels the request in Triton."""
        request = {"model_name": model, "inputs": [tensor(k, v) for k, v in inputs.items()],
                   "parameters": dict(FINAL_FLAG)}

        async def requests() -> AsyncIterator[dict]:
            yield request

        call = self.client.stream_infer(requests())
        finished = False
        try:
            async for result, error in call:
                if error is not None:
                    finished = True
                    raise from_triton(error, model)
                if result.get_response().outputs:
                    yield result
                if _is_final(result):
                    finished = True
                    return
            finished = True
            raise ApiError(502, f"model '{model}' ended its stream without a final response", kind="server_error")
        except InferenceServerException as exc:
            finished = True
            raise from_triton(exc, model) from None
        finally:
            if not finished:
                call.cancel()
