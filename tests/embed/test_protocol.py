"""/v1/embeddings' request model: OpenAI's parameters typed, anything else a 400 naming the parameter."""
from __future__ import annotations

import pytest

from tritonkit.gateway.errors import ApiError
from tritonkit.pipelines.embed.gateway.protocol import MAX_INPUTS, EmbeddingRequest


def parse(**body: object) -> EmbeddingRequest:
    return EmbeddingRequest.checked(body)


def refusal(**body: object) -> ApiError:
    with pytest.raises(ApiError) as caught:
        parse(**body)
    assert caught.value.status == 400
    return caught.value


@pytest.mark.parametrize("given, inputs", [
    ("one text", ["one text"]),
    (["a", "b"], ["a", "b"]),
    ([1, 2, 3], [[1, 2, 3]]),
    ([[1, 2], [3]], [[1, 2], [3]]),
])
def test_each_input_shape_gives_one_entry_per_embedding(given: object, inputs: list) -> None:
    assert parse(model="embed", input=given).inputs() == inputs


def test_defaults_and_null_as_absent() -> None:
    request = parse(model="embed", input="x", dimensions=None, encoding_format=None, user=None)
    assert (request.encoding_format, request.dimensions, request.user) == (None, None, None)


@pytest.mark.parametrize("body, param, code", [
    ({"model": "embed", "input": "x", "top_k": 3}, "top_k", "unknown_parameter"),
    ({"input": "x"}, "model", "missing_required_parameter"),
    ({"model": "embed"}, "input", "missing_required_parameter"),
    ({"model": "embed", "input": ""}, "input", "invalid_value"),
    ({"model": "embed", "input": ["a", ""]}, "input", "invalid_value"),
    ({"model": "embed", "input": []}, "input", "invalid_value"),
    ({"model": "embed", "input": [[1], []]}, "input", "invalid_value"),
    ({"model": "embed", "input": [1, -2]}, "input", "invalid_value"),
    ({"model": "embed", "input": [True]}, "input", "invalid_value"),
    ({"model": "embed", "input": ["a", 1]}, "input", "invalid_value"),
    ({"model": "embed", "input": ["a"] * (MAX_INPUTS + 1)}, "input", "invalid_value"),
    ({"model": "embed", "input": "x", "dimensions": 0}, "dimensions", "invalid_value"),
    ({"model": "embed", "input": "x", "dimensions": "8"}, "dimensions", "invalid_type"),
    ({"model": "embed", "input": "x", "encoding_format": "int8"}, "encoding_format", "invalid_value"),
    ({"model": 7, "input": "x"}, "model", "invalid_type"),
])
def test_bad_requests_name_the_parameter(body: dict, param: str, code: str) -> None:
    error = refusal(**body)
    assert (error.param, error.code) == (param, code)
    assert param in error.message and "\n" not in error.message
