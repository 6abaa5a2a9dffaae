"""Inputs/outputs: name, data_type, dims, reshape (variable-size and empty, batching and not), formats."""
from __future__ import annotations

import pytest

from .rule_helpers import IO, Rule, assert_rule, model

NOBATCH = 'backend: "python"\nmax_batch_size: 0\n'
TRT = 'platform: "tensorrt_plan"\nmax_batch_size: 8\n'
OUT = 'output [{name: "OUT" data_type: TYPE_FP32 dims: [4]}]\n'


def inp(fields: str, head: str = 'backend: "python"\nmax_batch_size: 8\n') -> str:
    """A model whose only input is `{fields}` (and one plain output)."""
    return model(head=head, io=f"input [{{{fields}}}]\n" + OUT)


RULES = [
    Rule("missing-data-type", inp('name: "IN" dims: [4]'),
         "input[0].data_type: 'IN' has no data_type; fix: set data_type, e.g. TYPE_FP32",
         inp('name: "IN" data_type: TYPE_FP32 dims: [4]')),
    Rule("missing-name", inp("data_type: TYPE_FP32 dims: [4]"), "input[0].name: is empty; fix: name the tensor",
         inp('name: "IN" data_type: TYPE_FP32 dims: [4]')),
    Rule("missing-dims",
         model(io='input [{name: "IN" data_type: TYPE_FP32 dims: [4]}]\noutput [{name: "OUT" data_type: TYPE_FP32}]\n'),
         "output[0].dims: 'OUT' has no dims; fix: list its shape without the batch dimension (e.g. [1] for one value "
         "per item)", model()),
    Rule("zero-dim", inp('name: "IN" data_type: TYPE_FP32 dims: [1, 0, 28]'),
         "input[0].dims: dims [1, 0, 28] of 'IN' has a dimension that is 0 or below -1; fix: use sizes >= 1, or -1 for "
         "a variable size",
         inp('name: "IN" data_type: TYPE_FP32 dims: [1, -1, 28]')),
    Rule("reshape-zero-dim", inp('name: "IN" data_type: TYPE_FP32 dims: [1] reshape {shape: [0]}'),
         "input[0].reshape: reshape [0] of 'IN' has a dimension that is 0 or below -1; fix: use sizes >= 1, or -1 for "
         "a variable size",
         inp('name: "IN" data_type: TYPE_FP32 dims: [1] reshape {shape: [1, 1]}')),
    Rule("empty-reshape-not-batching", inp('name: "IN" data_type: TYPE_FP32 dims: [1] reshape {shape: []}', NOBATCH),
         "input[0].reshape: 'IN' has an empty reshape but the model does not batch, so the tensor would hold no data; "
         "fix: remove the reshape or give it a shape",
         inp('name: "IN" data_type: TYPE_FP32 dims: [1] reshape {shape: []}')),
    Rule("empty-reshape-of-many", inp('name: "IN" data_type: TYPE_FP32 dims: [2] reshape {shape: []}'),
         "input[0].reshape: reshape [] does not fit dims [2] of 'IN': an empty reshape needs dims of one element; fix: "
         "make the element counts equal, with -1 in both at matching places",
         inp('name: "IN" data_type: TYPE_FP32 dims: [1] reshape {shape: []}')),
    Rule("empty-reshape-of-variable", inp('name: "IN" data_type: TYPE_FP32 dims: [-1] reshape {shape: []}'),
         "input[0].reshape: reshape [] does not fit dims [-1] of 'IN': an empty reshape needs dims of one element; "
         "fix: make the element counts equal, with -1 in both at matching places",
         inp('name: "IN" data_type: TYPE_FP32 dims: [-1] reshape {shape: [-1]}')),
    Rule("reshape-element-count", inp('name: "IN" data_type: TYPE_FP32 dims: [1, 3, 2] reshape {shape: [5]}'),
         "input[0].reshape: reshape [5] does not fit dims [1, 3, 2] of 'IN': dims and reshape hold different numbers "
         "of elements; fix: make the element counts equal, with -1 in both at matching places",
         inp('name: "IN" data_type: TYPE_FP32 dims: [1, 3, 2] reshape {shape: [6]}')),
    Rule("reshape-variable-in-one",
         model(io='input [{name: "IN" data_type: TYPE_FP32 dims: [4]}]\noutput [{name: "OUT" data_type: TYPE_FP32 '
                  'dims: [2, -1] reshape {shape: [2, 2]}}]\n', head=NOBATCH),
         "output[0].reshape: reshape [2, 2] does not fit dims [2, -1] of 'OUT': only one of them has a variable (-1) "
         "dimension; fix: make the element counts equal, with -1 in both at matching places",
         model(io='input [{name: "IN" data_type: TYPE_FP32 dims: [4]}]\noutput [{name: "OUT" data_type: TYPE_FP32 '
                  'dims: [2, -1] reshape {shape: [2, -1]}}]\n', head=NOBATCH)),
    Rule("reshape-variable-runs", inp('name: "IN" data_type: TYPE_FP32 dims: [2, -1] reshape {shape: [1, -1, 2]}'),
         "input[0].reshape: reshape [1, -1, 2] does not fit dims [2, -1] of 'IN': the fixed dimensions between -1s "
         "hold [1, 2] elements, not [2, 1]; fix: make each run of fixed dimensions between -1s hold the same number of "
         "elements",
         inp('name: "IN" data_type: TYPE_FP32 dims: [2, 4, -1, 6] reshape {shape: [8, -1, 1, 6]}')),
    Rule("reshape-variable-count",
         inp('name: "IN" data_type: TYPE_FP32 dims: [2, -1] reshape {shape: [2, -1, -1]}', NOBATCH),
         "input[0].reshape: reshape [2, -1, -1] and dims [2, -1] of 'IN' have different numbers of -1 (variable-size) "
         "dimensions; fix: use one -1 in reshape for each -1 in dims",
         inp('name: "IN" data_type: TYPE_FP32 dims: [2, -1] reshape {shape: [1, 2, -1]}', NOBATCH)),
    Rule("nchw-needs-3-dims", inp('name: "IN" data_type: TYPE_FP32 format: FORMAT_NCHW dims: [28, 28]'),
         "input[0].format: FORMAT_NCHW needs 3 dims but 'IN' has [28, 28]; fix: give 3 dims (without the batch "
         "dimension) or remove format",
         inp('name: "IN" data_type: TYPE_FP32 format: FORMAT_NCHW dims: [1, 28, 28]')),
    Rule("shape-tensor-not-tensorrt", inp('name: "IN" data_type: TYPE_INT32 dims: [2] is_shape_tensor: true'),
         "input[0].is_shape_tensor: shape tensors are only supported by TensorRT models (platform tensorrt_plan); fix: "
         "remove is_shape_tensor",
         inp('name: "IN" data_type: TYPE_INT32 dims: [2] is_shape_tensor: true', TRT)),
    Rule("non-linear-io-not-tensorrt",
         inp('name: "IN" data_type: TYPE_FP32 dims: [3, 8, 8] is_non_linear_format_io: true',
             'platform: "onnxruntime_onnx"\nmax_batch_size: 8\n'),
         "input[0].is_non_linear_format_io: non-linear IO format is only supported by TensorRT models (platform "
         "tensorrt_plan); fix: remove is_non_linear_format_io",
         inp('name: "IN" data_type: TYPE_FP32 dims: [3, 8, 8] is_non_linear_format_io: true', TRT)),
    Rule("non-linear-io-needs-3-dims",
         inp('name: "IN" data_type: TYPE_FP32 dims: [8, 8] is_non_linear_format_io: true', TRT),
         "input[0].is_non_linear_format_io: non-linear IO format input 'IN' needs 3 dims, has [8, 8]; fix: give 3 dims "
         "or remove is_non_linear_format_io",
         inp('name: "IN" data_type: TYPE_FP32 dims: [3, 8, 8] is_non_linear_format_io: true', TRT)),
    Rule("duplicate-tensor-is-warning", model(io=IO + 'input [{name: "IN" data_type: TYPE_FP32 dims: [4]}]\n'),
         "input: input 'IN' is declared 2 times; Triton keeps the first and ignores the others; fix: give each tensor "
         "a unique name",
         model(io=IO + 'input [{name: "IN2" data_type: TYPE_FP32 dims: [4]}]\n'), "warning"),
]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_io_rule(rule: Rule) -> None:
    assert_rule(rule)
