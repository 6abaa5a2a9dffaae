"""model_warmup as Triton runs it: concrete dims, data given, overrides for control/state tensors, batch_size."""
from __future__ import annotations

import pytest

from .rule_helpers import Rule, assert_rule, model

VARIABLE_IO = (
    'input [{name: "IN" data_type: TYPE_FP32 dims: [-1]}]\noutput [{name: "OUT" data_type: TYPE_FP32 dims: [4]}]\n'
)


def warm(inputs: str, batch_size: int = 1, extra: str = "", io: str = VARIABLE_IO) -> str:
    return model(extra + f'model_warmup [{{name: "w" batch_size: {batch_size} inputs {inputs}}}]\n', io=io)


IN = '{key: "IN" value: {data_type: TYPE_FP32 dims: [4] zero_data: true}}'
RULES = [
    Rule("variable-dims", warm('{key: "IN" value: {data_type: TYPE_FP32 dims: [-1] zero_data: true}}'),
         "model_warmup[0].inputs.IN.dims: [-1] has a variable (-1) dimension; fix: give concrete sizes", warm(IN)),
    Rule("no-data", warm('{key: "IN" value: {data_type: TYPE_FP32 dims: [4]}}'),
         "model_warmup[0].inputs.IN: has no data; fix: set zero_data: true, random_data: true or input_data_file",
         warm('{key: "IN" value: {data_type: TYPE_FP32 dims: [4] random_data: true}}')),
    Rule("wrong-data-type", warm('{key: "IN" value: {data_type: TYPE_INT64 dims: [4] zero_data: true}}'),
         "model_warmup[0].inputs.IN.data_type: TYPE_INT64 but the input is TYPE_FP32; fix: use the input's data type",
         warm(IN)),
    Rule("unknown-input-is-warning",
         warm(IN + ' inputs {key: "EXTRA" value: {data_type: TYPE_INT32 dims: [1] zero_data: true}}'),
         "model_warmup[0].inputs.EXTRA: warmup input 'EXTRA' is not an input of the model; Triton passes it to the "
         "backend as an extra tensor; fix: use one of: IN",
         warm(IN + ' inputs {key: "START" value: {data_type: TYPE_INT32 dims: [1] zero_data: true}}',
              extra='sequence_batching {control_input [{name: "START" control [{kind: CONTROL_SEQUENCE_START '
                    'int32_false_true: [0, 1]}]}]}\n'),
         "warning"),
    Rule("batch-above-max-is-warning", warm(IN, batch_size=16),
         "model_warmup[0].batch_size: 16 > max_batch_size 8: Triton sends 16 one-item requests in one execute call, "
         "more than the model takes at once; fix: lower the warmup batch_size",
         warm(IN, batch_size=8), "warning"),
    Rule("missing-required-input", warm('{key: "START" value: {data_type: TYPE_INT32 dims: [1] zero_data: true}}',
                                        extra='sequence_batching {control_input [{name: "START" control [{kind: '
                                              'CONTROL_SEQUENCE_START int32_false_true: [0, 1]}]}]}\n'),
         "model_warmup[0].inputs: no data for required input(s) IN; fix: add an entry for each required input",
         warm('{key: "IN" value: {data_type: TYPE_FP32 dims: [-1] zero_data: true}}', batch_size=0)),
]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_warmup_rule(rule: Rule) -> None:
    assert_rule(rule)
