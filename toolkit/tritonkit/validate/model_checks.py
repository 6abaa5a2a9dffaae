"""Checks that concern one model's config on its own (names, batching, sequences, warmup, state)."""
from __future__ import annotations

from collections import Counter

from tritonkit.model_config import pb
from tritonkit.validate.findings import Finding

_CONTROL = pb.ModelSequenceBatching.Control
_CORRID_TYPES = {pb.TYPE_UINT64, pb.TYPE_INT64, pb.TYPE_UINT32, pb.TYPE_INT32, pb.TYPE_STRING}
NAME_FIX = "use letters, digits, '_', '-' and '.'"


def unsafe_name_reason(name: str) -> str | None:
    """Why `name` cannot be a model directory name, or None when it can."""
    if not name or not name.strip():
        return "is empty"
    if name in (".", "..") or ".." in name.split("/"):
        return "is a relative path component"
    if "/" in name or "\\" in name:
        return "contains a path separator"
    if name != name.strip() or any(ord(ch) < 32 for ch in name):
        return "has leading/trailing spaces or control characters"
    if name.startswith("."):
        return "starts with '.', which hides it from the repository scan"
    return None


def check_model(name: str, c: pb.ModelConfig) -> list[Finding]:
    """All single-model findings for config `c` of model `name`."""
    found: list[Finding] = []
    found += _check_identity(name, c)
    found += _check_tensors(name, c)
    found += _check_batching(name, c)
    found += _check_sequence(name, c)
    found += _check_warmup(name, c)
    return found


def _check_identity(name: str, c: pb.ModelConfig) -> list[Finding]:
    found = []
    reason = unsafe_name_reason(name)
    if reason:
        found.append(Finding(name, "name", f"model name {name!r} {reason}", NAME_FIX))
    if not c.platform and not c.backend:
        found.append(Finding(name, "backend", "neither platform nor backend is set", "set backend (e.g. python, onnxruntime) or platform (e.g. ensemble)"))
    if c.platform == "ensemble":
        if not c.HasField("ensemble_scheduling"):
            found.append(Finding(name, "ensemble_scheduling", "platform 'ensemble' without ensemble_scheduling", "add ensemble_scheduling.step entries"))
        if len(c.instance_group):
            found.append(Finding(name, "instance_group", "an ensemble has no instances of its own", "remove instance_group from the ensemble and set it on the composing models"))
    elif c.HasField("ensemble_scheduling"):
        found.append(Finding(name, "platform", "ensemble_scheduling needs platform 'ensemble'", "set platform: ensemble"))
    return found


def _check_tensors(name: str, c: pb.ModelConfig) -> list[Finding]:
    found = []
    for kind, tensors in (("input", c.input), ("output", c.output)):
        for tname, count in Counter(t.name for t in tensors).items():
            if count > 1:
                found.append(Finding(name, kind, f"{kind} '{tname}' is declared {count} times", "give each tensor a unique name"))
        for i, t in enumerate(tensors):
            if any(d == 0 or d < -1 for d in t.dims):
                found.append(Finding(name, f"{kind}[{i}].dims", f"dims {list(t.dims)} of '{t.name}' has a dimension that is 0 or below -1", "use positive sizes or -1 for a variable size"))
            if t.HasField("reshape") and -1 not in t.dims and -1 not in t.reshape.shape and _prod(t.dims) != _prod(t.reshape.shape):
                found.append(Finding(name, f"{kind}[{i}].reshape", f"reshape {list(t.reshape.shape)} holds {_prod(t.reshape.shape)} elements but dims {list(t.dims)} hold {_prod(t.dims)}", "make the element counts equal"))
    return found


def _prod(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def _check_batching(name: str, c: pb.ModelConfig) -> list[Finding]:
    found = []
    batchers = []
    if c.HasField("dynamic_batching"):
        batchers.append(("dynamic_batching", c.dynamic_batching.preferred_batch_size))
    if c.HasField("sequence_batching") and c.sequence_batching.HasField("oldest"):
        batchers.append(("sequence_batching.oldest", c.sequence_batching.oldest.preferred_batch_size))
    for field, sizes in batchers:
        if c.max_batch_size == 0 and (sizes or field == "dynamic_batching"):
            found.append(Finding(name, f"{field}", "batching is configured but max_batch_size is 0", "set max_batch_size > 0 or remove the batcher"))
            continue
        for size in sizes:
            if size > c.max_batch_size:
                found.append(Finding(name, f"{field}.preferred_batch_size", f"{size} > max_batch_size {c.max_batch_size}", "lower it or raise max_batch_size"))
            elif size < 1:
                found.append(Finding(name, f"{field}.preferred_batch_size", f"{size} is not a batch size", "use sizes >= 1"))
    if c.HasField("dynamic_batching"):
        d = c.dynamic_batching
        if d.priority_levels and d.default_priority_level > d.priority_levels:
            found.append(Finding(name, "dynamic_batching.default_priority_level", f"{d.default_priority_level} > priority_levels {d.priority_levels}", "use a level between 1 and priority_levels"))
        if d.priority_levels and d.default_priority_level == 0:
            found.append(Finding(name, "dynamic_batching.default_priority_level", "must be set when priority_levels is set", "set it between 1 and priority_levels"))
        if not d.priority_levels and d.default_priority_level:
            found.append(Finding(name, "dynamic_batching.default_priority_level", f"{d.default_priority_level} has no effect because priority_levels is 0", "set priority_levels to the number of levels or remove default_priority_level"))
        for level in d.priority_queue_policy:
            if not d.priority_levels:
                found.append(Finding(name, f"dynamic_batching.priority_queue_policy.{level}", f"a queue policy for level {level} but priority_levels is 0", "set priority_levels or use default_queue_policy"))
            elif not 1 <= level <= d.priority_levels:
                found.append(Finding(name, f"dynamic_batching.priority_queue_policy.{level}", f"priority level {level} outside 1..{d.priority_levels}", "raise priority_levels or use an existing level"))
    return found


def _check_sequence(name: str, c: pb.ModelConfig) -> list[Finding]:
    if not c.HasField("sequence_batching"):
        return []
    s = c.sequence_batching
    found = []
    kinds: Counter[int] = Counter()
    input_names = {t.name for t in c.input}
    for i, ci in enumerate(s.control_input):
        if ci.name in input_names:
            found.append(Finding(name, f"sequence_batching.control_input[{i}].name", f"control '{ci.name}' is also declared as a model input", "remove it from input (Triton supplies control tensors)"))
        for j, ctl in enumerate(ci.control):
            kinds[ctl.kind] += 1
            where = f"sequence_batching.control_input[{i}].control[{j}]"
            if ctl.kind == _CONTROL.CONTROL_SEQUENCE_CORRID:
                if ctl.data_type not in _CORRID_TYPES:
                    found.append(Finding(name, f"{where}.data_type", f"CORRID data type {pb.DataType.Name(ctl.data_type)} is not allowed", "use TYPE_UINT64 (or TYPE_INT64, TYPE_UINT32, TYPE_INT32, TYPE_STRING)"))
            else:
                pairs = [v for v in (ctl.int32_false_true, ctl.fp32_false_true, ctl.bool_false_true) if len(v)]
                if len(pairs) != 1 or len(pairs[0]) != 2:
                    found.append(Finding(name, where, f"{_CONTROL.Kind.Name(ctl.kind)} needs exactly one false/true pair", "set int32_false_true: [0, 1]"))
    for kind, count in kinds.items():
        if count > 1:
            found.append(Finding(name, "sequence_batching.control_input", f"{_CONTROL.Kind.Name(kind)} is given {count} times", "keep one control of each kind"))
    found += _check_state_order(name, s)
    return found


def _check_state_order(name: str, s: pb.ModelSequenceBatching) -> list[Finding]:
    """Triton pairs implicit states by sorting input and output names separately; orders must agree."""
    found = []
    for field in ("input_name", "output_name"):
        for value, count in Counter(getattr(st, field) for st in s.state).items():
            if count > 1:
                found.append(Finding(name, f"sequence_batching.state.{field}", f"state {field} '{value}' is used {count} times", "give each state its own names"))
    by_input = sorted(s.state, key=lambda st: st.input_name)
    by_output = sorted(s.state, key=lambda st: st.output_name)
    for i, (a, b) in enumerate(zip(by_input, by_output)):
        if a.input_name != b.input_name:
            found.append(Finding(
                name, "sequence_batching.state",
                f"state '{a.input_name}'->'{a.output_name}' sorts at position {i} by input name but '{b.input_name}'->'{b.output_name}' sorts there by output name, which mixes up states in Triton",
                "name each state's input and output with the same suffix (e.g. INPUT_STATE_k / OUTPUT_STATE_k)",
            ))
            break
    return found


def _check_warmup(name: str, c: pb.ModelConfig) -> list[Finding]:
    found = []
    inputs = {t.name: t for t in c.input}
    for i, w in enumerate(c.model_warmup):
        where = f"model_warmup[{i}]"
        if c.max_batch_size == 0 and w.batch_size > 1:
            found.append(Finding(name, f"{where}.batch_size", f"{w.batch_size} but the model does not batch (max_batch_size 0)", "use batch_size: 1"))
        elif w.batch_size > c.max_batch_size > 0:
            found.append(Finding(name, f"{where}.batch_size", f"{w.batch_size} > max_batch_size {c.max_batch_size}", "lower the warmup batch_size"))
        for key, data in w.inputs.items():
            model_input = inputs.get(key)
            if model_input is None:
                found.append(Finding(name, f"{where}.inputs.{key}", f"warmup input '{key}' is not an input of the model", f"use one of: {', '.join(inputs) or '(no inputs)'}"))
                continue
            if data.data_type != model_input.data_type:
                found.append(Finding(name, f"{where}.inputs.{key}.data_type", f"{pb.DataType.Name(data.data_type)} but the input is {pb.DataType.Name(model_input.data_type)}", "use the input's data type"))
            if not _dims_fit(list(data.dims), list(model_input.dims)):
                found.append(Finding(name, f"{where}.inputs.{key}.dims", f"{list(data.dims)} does not fit the input's dims {list(model_input.dims)}", "give concrete sizes matching the input (-1 may take any size)"))
        missing = [n for n, t in inputs.items() if not t.optional and n not in w.inputs]
        if missing:
            found.append(Finding(name, f"{where}.inputs", f"no data for required input(s) {', '.join(missing)}", "add an entry for each required input"))
    return found


def _dims_fit(concrete: list[int], declared: list[int]) -> bool:
    """Whether concrete warmup dims match declared dims (where -1 accepts any positive size)."""
    if len(concrete) != len(declared):
        return False
    return all(c > 0 and (d == -1 or c == d) for c, d in zip(concrete, declared))
