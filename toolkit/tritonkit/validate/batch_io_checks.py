"""`batch_input` / `batch_output` of one model as Triton 2.51 checks them (ValidateBatchIO)."""
from collections import Counter

from tritonkit.triton.model_config import pb
from tritonkit.validate.findings import Finding

_BATCH_INPUT_TYPES = (pb.TYPE_INT32, pb.TYPE_FP32)


def check_batch_io(name: str, c: pb.ModelConfig) -> list[Finding]:
    """Findings on batch inputs and outputs: one source input each, known inputs/outputs, data types."""
    found: list[Finding] = []
    inputs = [t.name for t in c.input]
    outputs = [t.name for t in c.output]
    for i, b in enumerate(c.batch_input):
        where = f"batch_input[{i}]"
        found += _one_source(name, where, pb.BatchInput.Kind.Name(b.kind), list(b.source_input), inputs)
        if b.data_type not in _BATCH_INPUT_TYPES:
            found.append(Finding(name, f"{where}.data_type", f"{pb.DataType.Name(b.data_type)} but a batch input must "
                                 "be TYPE_INT32 or TYPE_FP32", "set data_type: TYPE_INT32 (or TYPE_FP32)"))
    for i, o in enumerate(c.batch_output):
        where = f"batch_output[{i}]"
        found += _one_source(name, where, pb.BatchOutput.Kind.Name(o.kind), list(o.source_input), inputs)
        for target in o.target_name:
            if target not in outputs:
                found.append(Finding(name, f"{where}.target_name", f"'{target}' is not an output of the model; only "
                                     "declared outputs can be batch outputs",
                                     f"use one of: {', '.join(outputs) or '(no outputs)'}"))
        for target, count in Counter(o.target_name).items():
            if count > 1:
                found.append(Finding(name, f"{where}.target_name", f"'{target}' is named {count} times",
                                     "name each target output once"))
    return found


def _one_source(name: str, where: str, kind: str, sources: list[str], inputs: list[str]) -> list[Finding]:
    """Every batch input and output kind takes exactly one source input, which must be a model input."""
    if len(sources) != 1:
        return [Finding(name, f"{where}.source_input", f"kind {kind} takes 1 source input, got {len(sources)}",
                        "name exactly one model input in source_input")]
    if sources[0] not in inputs:
        return [Finding(name, f"{where}.source_input", f"'{sources[0]}' is not an input of the model",
                        f"use one of: {', '.join(inputs) or '(no inputs)'}")]
    return []
