"""`tokenize`'s runtime: a client's token ids become the same encoder input as the text they come from (special
tokens and truncation as the tokenizer file says); ids outside the vocabulary are refused by value."""
from __future__ import annotations

import numpy as np
import pytest

from tests.embed.conftest import SENTENCES
from tritonkit.pipelines.embed.export.assets import write_assets
from tritonkit.pipelines.embed.runtime.tokens import Tokens, padded


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> Tokens:
    return Tokens(write_assets(tmp_path_factory.mktemp("embed-assets"))[0])


def test_ids_of_a_text_give_the_texts_input(tokens: Tokens) -> None:
    for text in SENTENCES:
        plain = tokens.tokenizer.encode(text, add_special_tokens=False).ids
        np.testing.assert_array_equal(tokens.of_ids(np.array(plain)), tokens.of_texts([text])[0])


def test_long_inputs_are_cut_at_the_models_limit(tokens: Tokens) -> None:
    lengths = [len(row) for row in tokens.of_texts(SENTENCES)]
    assert tokens.max_length is not None and max(lengths) == tokens.max_length
    assert len(tokens.of_ids(np.ones(10 * tokens.max_length, np.int64))) == tokens.max_length


@pytest.mark.parametrize("ids, message", [([5, 10**6], "token id 1000000 is outside"),
                                          ([-1], "token id -1 is outside"), ([], "token ids must not be empty")])
def test_bad_ids_are_refused_naming_the_input(tokens: Tokens, ids: list[int], message: str) -> None:
    with pytest.raises(ValueError, match=f"'input': {message}"):
        tokens.of_ids(np.array(ids, dtype=np.int64))


def test_padded_rows_keep_their_lengths() -> None:
    batch, lengths = padded([np.array([1, 2, 3]), np.array([4])])
    np.testing.assert_array_equal(batch, [[1, 2, 3], [4, 0, 0]])
    np.testing.assert_array_equal(lengths, [[3], [1]])
