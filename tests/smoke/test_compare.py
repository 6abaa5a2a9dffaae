"""Output comparison of the smoke test: inf and NaN match only themselves, whatever the tolerance."""
from __future__ import annotations

import numpy as np
import pytest

from tritonkit.smoke.compare import value_mismatch

INF, NAN = np.inf, np.nan


@pytest.mark.parametrize(("expected", "served"), [(INF, 1.0), (INF, -INF), (NAN, 1.0), (1.0, NAN), (1.0, INF)])
def test_an_inf_or_nan_on_one_side_fails(expected: float, served: float) -> None:
    problem = value_mismatch("y", np.array([0.5, expected], np.float32), np.array([0.5, served], np.float32), 1e-5,
                             1e-5)
    assert problem is not None and problem.startswith("output 'y' shape [2]: max abs error inf > atol 1e-05 + rtol "
                                                      "1e-05")


@pytest.mark.parametrize("value", [INF, -INF, NAN])
def test_a_matching_inf_or_nan_passes(value: float) -> None:
    assert value_mismatch("y", np.array([0.5, value], np.float32), np.array([0.5, value], np.float32), 1e-5,
                          1e-5) is None


def test_an_integer_output_served_for_a_float_golden_is_compared_as_float() -> None:
    assert value_mismatch("y", np.array([1.7]), np.array([1]), 1e-5, 1e-5) is not None
    assert value_mismatch("y", np.array([2.0]), np.array([2]), 1e-5, 1e-5) is None


def test_a_string_output_in_another_shape_fails_like_a_number_would() -> None:
    words = np.array([[b"open"], [b"menu"]], dtype=object)
    problem = value_mismatch("TEXT", words, words.reshape(1, 2), 0.0, 0.0)
    assert problem == "output 'TEXT': expected shape [2, 1], got [1, 2]"
    assert (
        value_mismatch("Y", np.zeros((2, 1)), np.zeros((1, 2)), 0.0, 0.0)
        == "output 'Y': expected shape [2, 1], got [1, 2]"
    )


def test_a_string_output_matches_as_bytes_or_str_in_the_same_shape_only_with_the_same_words() -> None:
    expected = np.array([["open menu"]], dtype=object)
    assert value_mismatch("TEXT", expected, np.array([[b"open menu"]], dtype=object), 0.0, 0.0) is None
    assert value_mismatch("TEXT", expected, np.array([[b"close menu"]], dtype=object), 0.0, 0.0) == (
        "output 'TEXT': expected ['open menu'], got ['close menu']")
