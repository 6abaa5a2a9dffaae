"""POST /v1/embeddings: each input embedded by the `embed` ensemble (one Triton request each, sent together, so
Triton's dynamic batcher runs them as one encoder batch), in OpenAI's response shape.

What the gateway knows of the pipeline: `embed` takes a batch of one, `text` [1] or `token_ids` [n], and answers
`embedding` [1, dim] and `token_count` [1, 1] (the tokens the encoder ran, special ones included); it refuses an id
outside the vocabulary itself (a 400 naming `input` here).
"""
import asyncio
import base64

import numpy as np
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from tritonkit.gateway.app import gateway_of
from tritonkit.gateway.errors import ApiError, bad_request
from tritonkit.gateway.protocol import Route
from tritonkit.gateway.triton import Triton
from tritonkit.pipelines.embed.gateway.protocol import EmbeddingRequest


def _tensors(one: str | list[int]) -> dict[str, np.ndarray]:
    if isinstance(one, str):
        return {"text": np.array([one.encode("utf-8")], dtype=np.object_)}
    return {"token_ids": np.array(one, dtype=np.int64)}


async def _embedded(triton: Triton, model: str, one: str | list[int]) -> tuple[np.ndarray, int]:
    try:
        result = await triton.infer(model, _tensors(one))
    except ApiError as exc:
        if exc.status == 400:   # the model refused this input
            exc.param = "input"
        raise
    return result.as_numpy("embedding").reshape(-1), int(result.as_numpy("token_count").reshape(-1)[0])


def shortened(vector: np.ndarray, dimensions: int | None) -> np.ndarray:
    """OpenAI's `dimensions`: the first DIMENSIONS values, scaled back to unit length."""
    if dimensions is None:
        return vector
    if dimensions > vector.size:
        raise bad_request(f"'dimensions' must be at most {vector.size}, this model's size; got {dimensions}",
                          "dimensions", "invalid_value")
    head = vector[:dimensions]
    return head / max(float(np.linalg.norm(head)), 1e-12)


def encoded(vector: np.ndarray, encoding_format: str) -> list[float] | str:
    """A vector as OpenAI sends it: floats, or base64 of its little-endian float32 bytes."""
    if encoding_format == "base64":
        return base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
    return vector.astype(np.float32).tolist()


async def embeddings(request: Request, body: EmbeddingRequest) -> Response:
    gateway = gateway_of(request)
    served = await gateway.served(body.model, "embed")
    results = await asyncio.gather(*(_embedded(gateway.triton, served.model, one) for one in body.inputs()))
    data = [{"object": "embedding", "index": i,
             "embedding": encoded(shortened(v, body.dimensions), body.encoding_format or "float")}
            for i, (v, _) in enumerate(results)]
    tokens = sum(n for _, n in results)
    return JSONResponse({"object": "list", "data": data, "model": served.id,
                         "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})


#: What the gateway serves of the pipeline: route path -> endpoint (a POST each).
ENDPOINTS = {"/v1/embeddings": Route(EmbeddingRequest, embeddings).serve}
