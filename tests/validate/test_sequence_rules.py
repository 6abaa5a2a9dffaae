"""sequence_batching: control tensors (one control each, kinds once, false/true values, CORRID types),
strategies, implicit state with initial_state and growable memory."""
from __future__ import annotations

import pytest

from .rule_helpers import Rule, assert_rule, model

START = '{name: "START" control [{kind: CONTROL_SEQUENCE_START int32_false_true: [0, 1]}]}'
READY = '{name: "READY" control [{kind: CONTROL_SEQUENCE_READY int32_false_true: [0, 1]}]}'
PAIR_FIX = "set int32_false_true: [0, 1]"


def seq(fields: str, extra: str = "") -> str:
    return model(f"sequence_batching {{{fields}}}\n" + extra)


def controls(*items: str) -> str:
    return seq(f"control_input [{', '.join(items)}]")


def state(initial: str, dims: str = "[4]", extra: str = "") -> str:
    init = f" initial_state [{initial}]" if initial else ""
    return seq(f'state [{{input_name: "S_IN" output_name: "S_OUT" data_type: TYPE_FP32 dims: {dims}{init}{extra}}}]')


ZERO = '{name: "z" data_type: TYPE_FP32 dims: [4] zero_data: true}'
RULES = [
    Rule("one-tensor-two-controls", controls(START, READY.replace('"READY"', '"START"')),
         "sequence_batching.control_input: control tensor 'START' is given 2 times; one tensor carries one control; "
         "fix: give each control its own tensor name",
         controls(START, READY)),
    Rule("kind-twice", controls(START, START.replace('"START"', '"BEGIN"')),
         "sequence_batching.control_input: CONTROL_SEQUENCE_START is given 2 times; fix: keep one control of each kind",
         controls(START)),
    Rule("control-without-values", controls('{name: "READY" control [{kind: CONTROL_SEQUENCE_READY}]}'),
         "sequence_batching.control_input[0].control[0]: CONTROL_SEQUENCE_READY needs exactly one false/true pair, "
         f"got 0; fix: {PAIR_FIX}", controls(READY)),
    Rule("control-two-value-kinds",
         controls('{name: "END" control [{kind: CONTROL_SEQUENCE_END int32_false_true: [0, 1] bool_false_true: [false, '
                  'true]}]}'),
         "sequence_batching.control_input[0].control[0]: CONTROL_SEQUENCE_END needs exactly one false/true pair, got "
         f"2; fix: {PAIR_FIX}",
         controls('{name: "END" control [{kind: CONTROL_SEQUENCE_END bool_false_true: [false, true]}]}')),
    Rule("control-three-values",
         controls('{name: "END" control [{kind: CONTROL_SEQUENCE_END fp32_false_true: [0, 1, 1]}]}'),
         "sequence_batching.control_input[0].control[0].fp32_false_true: CONTROL_SEQUENCE_END needs 2 values (false, "
         f"true), got 3; fix: {PAIR_FIX}",
         controls('{name: "END" control [{kind: CONTROL_SEQUENCE_END fp32_false_true: [0, 1]}]}')),
    Rule("corrid-with-values",
         controls('{name: "CORRID" control [{kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 int32_false_true: '
                  '[0, 1]}]}'),
         "sequence_batching.control_input[0].control[0].int32_false_true: CONTROL_SEQUENCE_CORRID takes no false/true "
         "values; fix: remove int32_false_true and set data_type",
         controls('{name: "CORRID" control [{kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64}]}')),
    Rule("corrid-float", controls('{name: "CORRID" control [{kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_FP32}]}'),
         "sequence_batching.control_input[0].control[0].data_type: CORRID data type TYPE_FP32 is not allowed; fix: use "
         "TYPE_UINT64 (or TYPE_INT64, TYPE_UINT32, TYPE_INT32, TYPE_STRING)",
         controls('{name: "CORRID" control [{kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_STRING}]}')),
    Rule("control-without-name", controls('{control [{kind: CONTROL_SEQUENCE_START int32_false_true: [0, 1]}]}'),
         "sequence_batching.control_input[0].name: is empty; fix: name the control tensor (e.g. START)",
         controls(START)),
    Rule("control-also-input-is-warning", controls(START.replace('"START"', '"IN"')),
         "sequence_batching.control_input[0].name: control 'IN' is also declared as a model input; Triton overrides "
         "what the client sends; fix: remove it from input (Triton supplies control tensors)",
         controls(START), "warning"),
    Rule("oldest-preferred-above-max", seq("oldest {preferred_batch_size: [16]}"),
         "sequence_batching.oldest.preferred_batch_size: 16 > max_batch_size 8; fix: lower it or raise max_batch_size",
         seq("oldest {preferred_batch_size: [8]}")),
    Rule("direct-slot-utilization", seq("direct {minimum_slot_utilization: 1.5}"),
         "sequence_batching.direct.minimum_slot_utilization: 1.5 is outside 0.0..1.0; fix: use a fraction such as 0.5 "
         "(or leave it unset)",
         seq("direct {minimum_slot_utilization: 0.5}")),
    Rule("two-initial-states", state(f"{ZERO}, {ZERO}"),
         "sequence_batching.state[0].initial_state: state 'S_IN' has 2 initial states; fix: keep one initial_state",
         state(ZERO)),
    Rule("initial-state-type", state(ZERO.replace("TYPE_FP32", "TYPE_INT32")),
         "sequence_batching.state[0].initial_state[0].data_type: TYPE_INT32 but state 'S_IN' is TYPE_FP32; fix: use "
         "the state's data type", state(ZERO)),
    Rule("initial-state-no-name", state(ZERO.replace('name: "z" ', "")),
         "sequence_batching.state[0].initial_state[0].name: is empty; fix: name the initial state", state(ZERO)),
    Rule("initial-state-rank", state(ZERO.replace("[4]", "[2, 2]")),
         "sequence_batching.state[0].initial_state[0].dims: [2, 2] has 2 dims but state 'S_IN' has 1; fix: give one "
         "size per state dimension", state(ZERO)),
    Rule("initial-state-variable", state(ZERO.replace("[4]", "[-1]"), dims="[-1]"),
         "sequence_batching.state[0].initial_state[0].dims: [-1] has a variable (-1) dimension; fix: give concrete "
         "sizes", state(ZERO, dims="[-1]")),
    Rule("initial-state-dims", state(ZERO.replace("[4]", "[3]")),
         "sequence_batching.state[0].initial_state[0].dims: [3] does not match the state dims [4]; fix: give the "
         "state's sizes (a -1 in the state may take any size)", state(ZERO)),
    Rule("initial-state-no-data", state(ZERO.replace(" zero_data: true", "")),
         "sequence_batching.state[0].initial_state[0]: has neither zero_data nor data_file; fix: set zero_data: true "
         "or data_file",
         state(ZERO.replace("zero_data: true", 'data_file: "s.bin"'))),
    Rule("growable-without-same-buffer", state("", extra=" use_growable_memory: true"),
         "sequence_batching.state[0].use_growable_memory: needs use_same_buffer_for_input_output; fix: set "
         "use_same_buffer_for_input_output: true",
         state("", extra=" use_growable_memory: true use_same_buffer_for_input_output: true")),
    Rule("state-input-shared",
         seq('state [{input_name: "S" output_name: "S_OUT1" data_type: TYPE_FP32 dims: [4]}, {input_name: "S" '
             'output_name: "S_OUT2" data_type: TYPE_FP32 dims: [4]}]'),
         "sequence_batching.state.input_name: state input_name 'S' is used 2 times; Triton 2.51 loads this, but the "
         "states then share one tensor; fix: give each state its own names",
         seq('state [{input_name: "S1" output_name: "S_OUT1" data_type: TYPE_FP32 dims: [4]}, {input_name: "S2" '
             'output_name: "S_OUT2" data_type: TYPE_FP32 dims: [4]}]'),
         "warning"),
    Rule("growable-on-cpu",
         state("", extra=" use_growable_memory: true use_same_buffer_for_input_output: true")
         + "instance_group [{kind: KIND_CPU}]\n",
         "sequence_batching.state[0].use_growable_memory: only works with KIND_GPU instances, but every instance group "
         "is CPU; fix: use KIND_GPU instances or set use_growable_memory: false",
         state("", extra=" use_growable_memory: true use_same_buffer_for_input_output: true")
         + "instance_group [{kind: KIND_GPU}]\n"),
]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_sequence_rule(rule: Rule) -> None:
    assert_rule(rule)
