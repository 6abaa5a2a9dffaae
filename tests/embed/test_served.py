"""/v1/embeddings with OpenAI's client against the embed starter on the embedded Triton: the 100 test sentences'
vectors equal sentence-transformers' own (cosine >= 0.999), batched equal one at a time bit for bit, base64 equals
float, `dimensions` truncates and renormalizes, token ids embed as their text does, usage counts the encoder's
tokens, and bad requests are 400s naming the parameter."""
from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import openai
import pytest

from tests.embed.conftest import SENTENCES, reference
from tritonkit.pipelines.embed.runtime.tokens import Tokens

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def client(embed_stack: tuple[Path, str]) -> openai.OpenAI:
    return openai.OpenAI(base_url=embed_stack[1], api_key="unused", max_retries=0, timeout=300)


@pytest.fixture(scope="module")
def tokens(embed_stack: tuple[Path, str]) -> Tokens:
    """The tokenizer the served `tokenize` model loads."""
    return Tokens(embed_stack[0] / "model_repository" / "tokenize" / "1" / "tokenizer.json")


def vectors(client: openai.OpenAI, given: object, **options: object) -> np.ndarray:
    answer = client.embeddings.create(model="embed", input=given, **options)  # type: ignore[arg-type]
    assert [d.index for d in answer.data] == list(range(len(answer.data)))
    return np.array([d.embedding for d in answer.data], dtype=np.float32)


@pytest.fixture(scope="module")
def served_floats(client: openai.OpenAI) -> np.ndarray:
    return vectors(client, SENTENCES, encoding_format="float")


def test_vectors_equal_sentence_transformers(served_floats: np.ndarray) -> None:
    theirs = reference(SENTENCES)
    assert served_floats.shape == theirs.shape == (100, 384)
    cosine = np.sum(served_floats * theirs, axis=1) / np.linalg.norm(served_floats, axis=1) / np.linalg.norm(theirs,
                                                                                                             axis=1)
    assert cosine.min() >= 0.999, (cosine.argmin(), cosine.min())
    np.testing.assert_allclose(served_floats, theirs, atol=1e-4)


def test_base64_equals_float(client: openai.OpenAI, served_floats: np.ndarray) -> None:
    raw = client.embeddings.with_raw_response.create(model="embed", input=SENTENCES[:5], encoding_format="base64")
    data = raw.http_response.json()["data"]
    decoded = np.array([np.frombuffer(base64.b64decode(d["embedding"]), dtype="<f4") for d in data])
    np.testing.assert_allclose(decoded, served_floats[:5], atol=1e-6)
    np.testing.assert_array_equal(vectors(client, SENTENCES[:5]), decoded)   # the client's own default: base64


def test_a_batch_equals_one_at_a_time(client: openai.OpenAI, served_floats: np.ndarray) -> None:
    for i in (0, 7, 33, 98, 99):
        np.testing.assert_array_equal(vectors(client, SENTENCES[i], encoding_format="float")[0], served_floats[i])


def test_dimensions_truncate_then_renormalize(client: openai.OpenAI, served_floats: np.ndarray) -> None:
    short = vectors(client, SENTENCES[:3], dimensions=64, encoding_format="float")
    head = served_floats[:3, :64]
    np.testing.assert_allclose(short, head / np.linalg.norm(head, axis=1, keepdims=True), atol=1e-6)
    assert vectors(client, SENTENCES[0], dimensions=384).shape == (1, 384)
    with pytest.raises(openai.BadRequestError) as refused:
        vectors(client, SENTENCES[0], dimensions=385)
    assert refused.value.body["param"] == "dimensions" and "384" in refused.value.body["message"]


def test_token_ids_embed_as_their_text_does(client: openai.OpenAI, tokens: Tokens, served_floats: np.ndarray) -> None:
    ids = [tokens.tokenizer.encode(SENTENCES[i], add_special_tokens=False).ids for i in (4, 98)]
    np.testing.assert_allclose(vectors(client, ids[0]), served_floats[4:5], atol=1e-5)
    np.testing.assert_allclose(vectors(client, ids), served_floats[[4, 98]], atol=1e-5)   # the long one truncated


def test_usage_counts_the_tokens_the_encoder_ran(client: openai.OpenAI) -> None:
    from sentence_transformers import SentenceTransformer

    from tritonkit.pipelines.embed.export.encoder import model_dir

    expected = int(SentenceTransformer(model_dir(), device="cpu").tokenize(SENTENCES)["attention_mask"].sum())
    usage = client.embeddings.create(model="embed", input=SENTENCES).usage
    assert usage.prompt_tokens == usage.total_tokens == expected


@pytest.mark.parametrize("body, param", [
    ({"input": "x", "top_k": 3}, "top_k"),
    ({"input": ""}, "input"),
    ({"input": [[1, 2], []]}, "input"),
    ({"input": [7592, 10**6]}, "input"),
    ({"input": "x", "encoding_format": "int8"}, "encoding_format"),
])
def test_bad_requests_are_400s_naming_the_parameter(client: openai.OpenAI, body: dict, param: str) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        client.embeddings.create(model="embed", input=body.pop("input"), extra_body=body)
    assert refused.value.body["param"] == param, refused.value.body


def test_an_unknown_model_is_a_404(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError):
        client.embeddings.create(model="text-embedding-3-small", input="x")
