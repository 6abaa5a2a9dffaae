"""batch_input / batch_output: kinds and their one source input, data types, target outputs."""
from __future__ import annotations

import pytest

from .rule_helpers import Rule, assert_rule, model

SOURCE_FIX = "name exactly one model input in source_input"


def batch_input(fields: str) -> str:
    return model(f"batch_input [{{target_name: \"B\" {fields}}}]\n")


def batch_output(fields: str) -> str:
    return model(f"batch_output [{{{fields}}}]\n")


RULES = [
    Rule("input-no-source", batch_input("kind: BATCH_ELEMENT_COUNT data_type: TYPE_FP32"),
         f"batch_input[0].source_input: kind BATCH_ELEMENT_COUNT takes 1 source input, got 0; fix: {SOURCE_FIX}",
         batch_input('kind: BATCH_ELEMENT_COUNT data_type: TYPE_FP32 source_input: "IN"')),
    Rule("input-two-sources", batch_input('kind: BATCH_ITEM_SHAPE data_type: TYPE_INT32 source_input: ["IN", "IN"]'),
         f"batch_input[0].source_input: kind BATCH_ITEM_SHAPE takes 1 source input, got 2; fix: {SOURCE_FIX}",
         batch_input('kind: BATCH_ITEM_SHAPE data_type: TYPE_INT32 source_input: ["IN"]')),
    Rule("input-unknown-source",
         batch_input('kind: BATCH_ACCUMULATED_ELEMENT_COUNT data_type: TYPE_FP32 source_input: "RAW"'),
         "batch_input[0].source_input: 'RAW' is not an input of the model; fix: use one of: IN",
         batch_input('kind: BATCH_ACCUMULATED_ELEMENT_COUNT data_type: TYPE_FP32 source_input: "IN"')),
    Rule("input-data-type",
         batch_input('kind: BATCH_MAX_ELEMENT_COUNT_AS_SHAPE data_type: TYPE_INT64 source_input: "IN"'),
         "batch_input[0].data_type: TYPE_INT64 but a batch input must be TYPE_INT32 or TYPE_FP32; fix: set data_type: "
         "TYPE_INT32 (or TYPE_FP32)",
         batch_input('kind: BATCH_MAX_ELEMENT_COUNT_AS_SHAPE data_type: TYPE_INT32 source_input: "IN"')),
    Rule("output-no-source", batch_output('kind: BATCH_SCATTER_WITH_INPUT_SHAPE target_name: "OUT"'),
         "batch_output[0].source_input: kind BATCH_SCATTER_WITH_INPUT_SHAPE takes 1 source input, got 0; fix: "
         f"{SOURCE_FIX}",
         batch_output('kind: BATCH_SCATTER_WITH_INPUT_SHAPE target_name: "OUT" source_input: "IN"')),
    Rule("output-unknown-source",
         batch_output('kind: BATCH_SCATTER_WITH_INPUT_SHAPE target_name: "OUT" source_input: "OUT"'),
         "batch_output[0].source_input: 'OUT' is not an input of the model; fix: use one of: IN",
         batch_output('kind: BATCH_SCATTER_WITH_INPUT_SHAPE target_name: "OUT" source_input: "IN"')),
    Rule("output-target-not-an-output",
         batch_output('kind: BATCH_SCATTER_WITH_INPUT_SHAPE target_name: "IN" source_input: "IN"'),
         "batch_output[0].target_name: 'IN' is not an output of the model; only declared outputs can be batch outputs; "
         "fix: use one of: OUT",
         batch_output('kind: BATCH_SCATTER_WITH_INPUT_SHAPE target_name: "OUT" source_input: "IN"')),
    Rule("output-target-twice",
         batch_output('kind: BATCH_SCATTER_WITH_INPUT_SHAPE target_name: ["OUT", "OUT"] source_input: "IN"'),
         "batch_output[0].target_name: 'OUT' is named 2 times; fix: name each target output once",
         batch_output('kind: BATCH_SCATTER_WITH_INPUT_SHAPE target_name: ["OUT"] source_input: "IN"')),
]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_batch_io_rule(rule: Rule) -> None:
    assert_rule(rule)
