"""The streamed chat/completions answer reads its Triton stream on to the final response after the finish_reason
(which comes before Triton's empty final response), so the gateway keeps that gRPC stream for the next request
instead of cancelling it (gateway/triton.py). No server: the route's event generator over scripted responses."""
from __future__ import annotations

import asyncio

import numpy as np

from tritonkit.gateway.sse import DONE
from tritonkit.pipelines.llm.gateway.respond import Asked, Choice, Shape, _events


class Result:
    """What Step.of reads from a streamed InferResult."""

    def __init__(self, text: str, ids: list[int], reason: str) -> None:
        self.arrays = {"text_output": np.array([text.encode()], dtype=object), "token_ids": np.array(ids),
                       "finish_reason": np.array([reason.encode()], dtype=object)}

    def as_numpy(self, name: str) -> np.ndarray | None:
        return self.arrays.get(name)   # outputs not asked for (log probabilities) are absent


def test_the_stream_is_read_to_its_end_after_the_finish_reason() -> None:
    ended: list[bool] = []

    async def responses():
        yield Result("Hello", [5], "")
        yield Result(" world", [7], "length")
        ended.append(True)   # reached only when the route asks for more after the finish_reason

    async def run() -> list[bytes]:
        shape = Shape(True, "chatcmpl-1", "tiny", 0)
        choice = Choice(0, responses(), shape, Asked(stream=True, include_usage=True), lambda token: b"", [1, 2, 3])
        await choice.start()
        return [c async for c in _events([choice], shape, 3, True)]

    chunks = asyncio.run(run())
    assert ended == [True]
    assert chunks[-1] == DONE and b'"finish_reason": "length"' in chunks[-3] and b'"total_tokens": 5' in chunks[-2]
