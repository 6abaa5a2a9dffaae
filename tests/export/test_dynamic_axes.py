"""The exporter's dynamic axes: a spec key with `*` names every matching tensor (a decoder's per-layer caches), and
a key naming nothing is one located error."""
from __future__ import annotations

import pytest

from tritonkit.errors import Where
from tritonkit.export.errors import ExportError
from tritonkit.export.pipeline import dynamic_axes

RANKS = {"input_ids": 2, "past_key_0": 4, "past_key_1": 4, "past_value_0": 4, "past_value_1": 4, "logits": 2}
WHERE = Where("tritonkit.yaml", "models.generate")


def test_a_pattern_names_every_matching_tensor() -> None:
    axes = dynamic_axes(RANKS, list(RANKS), {"input_ids": {1: "seq"}, "past_key_*": {2: "past"}}, 8, WHERE)
    assert axes["input_ids"] == {0: "batch", 1: "seq"}
    assert axes["past_key_0"] == axes["past_key_1"] == {0: "batch", 2: "past"}
    assert axes["past_value_0"] == axes["logits"] == {0: "batch"}


@pytest.mark.parametrize("requested, field, problem", [
    ({"past_kv_*": {2: "past"}}, "past_kv_*", "'past_kv_*' is not an input or output of the model"),
    ({"past_key": {3: "past"}}, "past_key", "'past_key' is not an input or output of the model"),
    ({"past_key_*": {4: "past"}}, "past_key_*", "axis 4 is out of range for rank 4"),
])
def test_a_key_that_fits_no_tensor_is_refused_where_it_is_written(requested, field, problem) -> None:
    with pytest.raises(ExportError) as info:
        dynamic_axes(RANKS, list(RANKS), requested, 8, WHERE)
    text = str(info.value)
    assert f"models.generate.export.dynamic_axes.{field}" in text and problem in text, text
