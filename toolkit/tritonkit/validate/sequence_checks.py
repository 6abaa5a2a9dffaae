"""`sequence_batching` as Triton 2.51 checks it: control tensors (Get*SequenceControlProperties), 'oldest'/'direct'
strategies (ValidateModelConfig) and implicit state (SequenceBatchScheduler::Create, SequenceStates::Initialize)."""
from collections import Counter

from tritonkit.triton.model_config import pb
from tritonkit.validate.findings import Finding
from tritonkit.validate.io_checks import dims_match
from tritonkit.validate.scheduling_checks import preferred_size_findings

_CONTROL = pb.ModelSequenceBatching.Control
_CORRID_TYPES = {pb.TYPE_UINT64, pb.TYPE_INT64, pb.TYPE_UINT32, pb.TYPE_INT32, pb.TYPE_STRING}
_CPU_KINDS = {pb.ModelInstanceGroup.KIND_CPU, pb.ModelInstanceGroup.KIND_MODEL}


def check_sequence(name: str, c: pb.ModelConfig) -> list[Finding]:
    if not c.HasField("sequence_batching"):
        return []
    s = c.sequence_batching
    found = _check_controls(name, c)
    if s.HasField("oldest"):
        found += preferred_size_findings(name, "sequence_batching.oldest", s.oldest.preferred_batch_size,
                                         c.max_batch_size)
    if s.HasField("direct") and not 0.0 <= s.direct.minimum_slot_utilization <= 1.0:
        found.append(Finding(name, "sequence_batching.direct.minimum_slot_utilization",
                             f"{s.direct.minimum_slot_utilization} is outside 0.0..1.0",
                             "use a fraction such as 0.5 (or leave it unset)"))
    found += _check_states(name, c)
    found += _check_state_order(name, s)
    return found


def _check_controls(name: str, c: pb.ModelConfig) -> list[Finding]:
    s = c.sequence_batching
    found = []
    kinds: Counter[int] = Counter()
    input_names = {t.name for t in c.input}
    for tensor, count in Counter(ci.name for ci in s.control_input).items():
        if count > 1:
            found.append(Finding(name, "sequence_batching.control_input", f"control tensor '{tensor}' is given {count} "
                                 "times; one tensor carries one control", "give each control its own tensor name"))
    for i, ci in enumerate(s.control_input):
        if not ci.name:
            found.append(Finding(name, f"sequence_batching.control_input[{i}].name",
                                 "is empty", "name the control tensor (e.g. START)"))
        elif ci.name in input_names:
            found.append(Finding(name, f"sequence_batching.control_input[{i}].name",
                                 f"control '{ci.name}' is also declared as a model input; Triton overrides what the "
                                 "client sends", "remove it from input (Triton supplies control tensors)", "warning"))
        for j, ctl in enumerate(ci.control):
            kinds[ctl.kind] += 1
            problem = _control_problem(ctl)
            if problem:
                found.append(Finding(name, f"sequence_batching.control_input[{i}].control[{j}]{problem[0]}",
                                     *problem[1:]))
    for kind, count in kinds.items():
        if count > 1:
            found.append(Finding(name, "sequence_batching.control_input", f"{_CONTROL.Kind.Name(kind)} "
                                 f"is given {count} times", "keep one control of each kind"))
    return found


def _control_problem(ctl: pb.ModelSequenceBatching.Control) -> tuple[str, str, str] | None:
    """(field suffix, problem, fix): CORRID takes a data_type, the others exactly one false/true pair."""
    kind = _CONTROL.Kind.Name(ctl.kind)
    pairs = [(f, getattr(ctl, f)) for f in ("int32_false_true", "fp32_false_true",
                                            "bool_false_true") if len(getattr(ctl, f))]
    if ctl.kind == _CONTROL.CONTROL_SEQUENCE_CORRID:
        if pairs:
            return f".{pairs[0][0]}", f"{kind} takes no false/true values", f"remove {pairs[0][0]} and set data_type"
        if ctl.data_type not in _CORRID_TYPES:
            return (".data_type", f"CORRID data type {pb.DataType.Name(ctl.data_type)} is not allowed",
                    "use TYPE_UINT64 (or TYPE_INT64, TYPE_UINT32, TYPE_INT32, TYPE_STRING)")
        return None
    if len(pairs) != 1:
        return "", f"{kind} needs exactly one false/true pair, got {len(pairs)}", "set int32_false_true: [0, 1]"
    if len(pairs[0][1]) != 2:
        return (f".{pairs[0][0]}", f"{kind} needs 2 values (false, true), got {len(pairs[0][1])}",
                "set int32_false_true: [0, 1]")
    return None


def _check_states(name: str, c: pb.ModelConfig) -> list[Finding]:
    """Initial state (one at most, named, same type and rank, fixed dims, with data) and growable memory."""
    found = []
    cpu_only = bool(c.instance_group) and all(g.kind in _CPU_KINDS for g in c.instance_group)
    for i, st in enumerate(c.sequence_batching.state):
        where = f"sequence_batching.state[{i}]"
        if len(st.initial_state) > 1:
            found.append(Finding(name, f"{where}.initial_state", f"state '{st.input_name}' has "
                                 f"{len(st.initial_state)} initial states", "keep one initial_state"))
        elif st.initial_state:
            problem = _initial_state_problem(st, st.initial_state[0])
            if problem:
                found.append(Finding(name, f"{where}.initial_state[0]{problem[0]}", *problem[1:]))
        if st.use_growable_memory and not st.use_same_buffer_for_input_output:
            found.append(Finding(name, f"{where}.use_growable_memory", "needs use_same_buffer_for_input_output",
                                 "set use_same_buffer_for_input_output: true"))
        elif st.use_growable_memory and cpu_only:
            found.append(Finding(name, f"{where}.use_growable_memory", "only works with KIND_GPU instances, but every "
                                 "instance group is CPU", "use KIND_GPU instances or set use_growable_memory: false"))
    return found


def _initial_state_problem(st: pb.ModelSequenceBatching.State,
                           init: pb.ModelSequenceBatching.InitialState) -> tuple[str, str, str] | None:
    if init.data_type != st.data_type:
        return (".data_type", f"{pb.DataType.Name(init.data_type)} but state '{st.input_name}' is "
                f"{pb.DataType.Name(st.data_type)}", "use the state's data type")
    if not init.name:
        return ".name", "is empty", "name the initial state"
    if len(init.dims) != len(st.dims):
        return (".dims", f"{list(init.dims)} has {len(init.dims)} dims but state '{st.input_name}' has {len(st.dims)}",
                "give one size per state dimension")
    if -1 in init.dims:
        return ".dims", f"{list(init.dims)} has a variable (-1) dimension", "give concrete sizes"
    if not dims_match(init.dims, st.dims):
        return (".dims", f"{list(init.dims)} does not match the state dims {list(st.dims)}",
                "give the state's sizes (a -1 in the state may take any size)")
    if init.WhichOneof("state_data") is None:
        return "", "has neither zero_data nor data_file", "set zero_data: true or data_file"
    return None


def _check_state_order(name: str, s: pb.ModelSequenceBatching) -> list[Finding]:
    """Triton pairs implicit states by sorting input and output names separately; orders must agree."""
    found = []
    for field in ("input_name", "output_name"):
        for value, count in Counter(getattr(st, field) for st in s.state).items():
            if count > 1:
                found.append(Finding(name, f"sequence_batching.state.{field}", f"state {field} '{value}' is used "
                                     f"{count} times; Triton 2.51 loads this, but the states then share one tensor",
                                     "give each state its own names", "warning"))
    by_input = sorted(s.state, key=lambda st: st.input_name)
    by_output = sorted(s.state, key=lambda st: st.output_name)
    for i, (a, b) in enumerate(zip(by_input, by_output)):
        if a.input_name != b.input_name:
            found.append(Finding(name, "sequence_batching.state", f"state '{a.input_name}'->'{a.output_name}' sorts at "
                                 f"position {i} by input name but '{b.input_name}'->'{b.output_name}' sorts there by "
                                 "output name, which mixes up states in Triton", "name each state's input and "
                                 "output with the same suffix (e.g. INPUT_STATE_k / OUTPUT_STATE_k)"))
            break
    return found
