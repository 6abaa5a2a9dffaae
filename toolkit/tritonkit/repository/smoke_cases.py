"""Turns the spec's `smoke:` cases into typed golden samples, checked against the model's inputs and outputs."""
from __future__ import annotations

import numpy as np
from tritonclient.grpc import model_config_pb2 as pb
from tritonclient.utils import triton_to_np_dtype

from tritonkit.errors import Problem
from tritonkit.golden import GoldenCase, Tensors
from tritonkit.spec.smoke import SmokeCase


def numpy_dtype(data_type: int) -> np.dtype:
    """numpy dtype for a ModelConfig data type (object for strings: the config's STRING is the protocol's BYTES)."""
    name = pb.DataType.Name(data_type)[len("TYPE_"):]
    return np.dtype(triton_to_np_dtype("BYTES" if name == "STRING" else name))


def golden_from_spec(model: str, config: pb.ModelConfig, cases: list[SmokeCase], shown: str) -> tuple[list[GoldenCase], list[Problem]]:
    """Golden cases named `caseNNN`, plus a problem for every unknown tensor or mis-shaped value."""
    inputs = {t.name: t for t in config.input}
    outputs = {t.name: t for t in config.output}
    problems: list[Problem] = []
    golden: list[GoldenCase] = []

    def convert(values: dict, table: dict, where: str, kind: str) -> Tensors:
        out: Tensors = {}
        for name, value in values.items():
            tensor = table.get(name)
            if tensor is None:
                problems.append(Problem(shown, f"{where}.{name}", f"'{model}' has no {kind} '{name}'", f"use one of: {', '.join(table) or '(none)'}"))
                continue
            try:
                array = np.array(value, dtype=numpy_dtype(tensor.data_type))
            except (TypeError, ValueError) as exc:
                problems.append(Problem(shown, f"{where}.{name}", f"value does not convert to {pb.DataType.Name(tensor.data_type)} ({exc})", "write numbers (or strings) in nested lists"))
                continue
            dims = list(tensor.dims)
            shape = list(array.shape[1:]) if config.max_batch_size > 0 else list(array.shape)
            if len(shape) != len(dims) or any(d != -1 and d != s for d, s in zip(dims, shape)):
                batch = "[batch] + " if config.max_batch_size > 0 else ""
                problems.append(Problem(shown, f"{where}.{name}", f"shape {list(array.shape)} does not fit {batch}dims {dims}", "nest the values to the declared shape" + (" with the batch dimension first" if batch else "")))
                continue
            out[name] = array
        return out

    for i, case in enumerate(cases):
        where = f"models.{model}.smoke[{i}]"
        name = f"case{i:03d}"
        if case.sequence:
            steps = [(convert(s.inputs, inputs, f"{where}.sequence[{k}].inputs", "input"), convert(s.outputs, outputs, f"{where}.sequence[{k}].outputs", "output")) for k, s in enumerate(case.sequence)]
            golden.append(GoldenCase(name, "sequence", steps, atol=case.atol, rtol=case.rtol))
        elif case.stream:
            responses = [convert(r, outputs, f"{where}.stream[{k}]", "output") for k, r in enumerate(case.stream)]
            golden.append(GoldenCase(name, "stream", [(convert(case.inputs, inputs, f"{where}.inputs", "input"), {})], responses, case.atol, case.rtol))
        else:
            golden.append(GoldenCase(name, "request", [(convert(case.inputs, inputs, f"{where}.inputs", "input"), convert(case.outputs, outputs, f"{where}.outputs", "output"))], atol=case.atol, rtol=case.rtol))
    return golden, problems
