"""`model_warmup` as Triton 2.51 runs it (TritonModelInstance::GenerateWarmupData, then request checks).

A sample with batch_size N becomes N requests of one item each, executed together; a sample with
batch_size 0 is skipped. Inputs that are not model inputs are sent as override inputs (that is how
warmup feeds sequence control and state tensors).
"""
from tritonkit.triton.model_config import pb
from tritonkit.validate.findings import Finding
from tritonkit.validate.io_checks import dims_match


def check_warmup(name: str, c: pb.ModelConfig) -> list[Finding]:
    found = []
    inputs = {t.name: t for t in c.input}
    s = c.sequence_batching
    overrides = {ci.name for ci in s.control_input} | {st.input_name for st in s.state}
    for i, w in enumerate(c.model_warmup):
        where = f"model_warmup[{i}]"
        if w.batch_size == 0:
            continue
        if w.batch_size > max(c.max_batch_size, 1):
            found.append(Finding(name, f"{where}.batch_size", f"{w.batch_size} > max_batch_size {c.max_batch_size}: "
                                 f"Triton sends {w.batch_size} one-item requests in one execute call, more than the "
                                 "model takes at once", "lower the warmup batch_size", "warning"))
        for key, data in w.inputs.items():
            found += _check_input(name, f"{where}.inputs.{key}", key, data, inputs.get(key), key in overrides,
                                  list(inputs))
        missing = [n for n, t in inputs.items() if not t.optional and n not in w.inputs]
        if missing:
            found.append(Finding(name, f"{where}.inputs", f"no data for required input(s) {', '.join(missing)}",
                                 "add an entry for each required input"))
    return found


def _check_input(name: str, where: str, key: str, data: pb.ModelWarmup.Input, model_input: pb.ModelInput | None,
                 is_override: bool, names: list[str]) -> list[Finding]:
    if -1 in data.dims:
        return [Finding(name, f"{where}.dims", f"{list(data.dims)} has a variable (-1) dimension",
                        "give concrete sizes")]
    if data.WhichOneof("input_data_type") is None:
        return [Finding(name, where, "has no data", "set zero_data: true, random_data: true or input_data_file")]
    if model_input is None:
        if is_override:
            return []
        return [Finding(name, where, f"warmup input '{key}' is not an input of the model; Triton passes it to the "
                        "backend as an extra tensor", f"use one of: {', '.join(names) or '(no inputs)'}", "warning")]
    if data.data_type != model_input.data_type:
        return [Finding(name, f"{where}.data_type", f"{pb.DataType.Name(data.data_type)} but the input is "
                        f"{pb.DataType.Name(model_input.data_type)}", "use the input's data type")]
    if not dims_match(data.dims, model_input.dims):  # the sample's dims hold no -1 (refused above)
        return [Finding(name, f"{where}.dims", f"{list(data.dims)} does not fit the input's dims "
                        f"{list(model_input.dims)}", "give concrete sizes matching the input (-1 may take any size)")]
    return []
