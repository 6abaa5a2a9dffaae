"""Turns the spec's `smoke:` cases into typed golden samples, checked against the model's inputs and outputs."""
import warnings
import wave
from pathlib import Path

import numpy as np

from tritonkit.errors import Problem, Where
from tritonkit.golden import GoldenCase, Tensors
from tritonkit.package_files import resolve_spec_path
from tritonkit.spec.loader import shown_path
from tritonkit.spec.project import SmokeCases
from tritonkit.spec.smoke import tensor_file
from tritonkit.triton.datatypes import numpy_dtype
from tritonkit.triton.model_config import pb
from tritonkit.validate.io_checks import has_bad_dim


def _as_type(value: object, dtype: np.dtype) -> np.ndarray:
    """`value` as an array of `dtype`; numpy's warnings raise, since it would otherwise wrap an integer that
    does not fit (2**40 as INT32) or turn a float too large for FP32 into inf, and the golden would be wrong."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return np.array(value, dtype=dtype)


def golden_from_spec(model: str, config: pb.ModelConfig,
                     sources: list[SmokeCases]) -> tuple[list[GoldenCase], list[Problem]]:
    """Golden cases named `caseNNN` (numbered across the sources), plus a problem for every unknown tensor,
    unreadable tensor file or mis-shaped value."""
    tables = {"input": {t.name: t for t in config.input}, "output": {t.name: t for t in config.output}}
    batched = config.max_batch_size > 0
    problems: list[Problem] = []
    golden: list[GoldenCase] = []

    def convert(values: dict, kind: str, where: Where, source: SmokeCases) -> Tensors:
        out: Tensors = {}
        for name, value in values.items():
            tensor, at = tables[kind].get(name), where.at(name)
            if tensor is None:
                problems.append(Problem.at(at, f"'{model}' has no {kind} '{name}'",
                                           f"use one of: {', '.join(tables[kind]) or '(none)'}"))
                continue
            written, type_name = tensor_file(value), pb.DataType.Name(tensor.data_type)
            if written is not None:
                try:
                    value = read_tensor_file(resolve_spec_path(written, source.file.parent))
                except (OSError, ValueError, EOFError, wave.Error) as exc:
                    problems.append(Problem.at(where.at(f"{name}.file"), f"cannot read '{written}' ({exc})",
                                               f"give a .npy array or a mono 16-bit .wav, relative to {where.file}"))
                    continue
                value = value[None] if batched else value  # a file holds one request's tensor
            try:
                array = _as_type(value, numpy_dtype(tensor.data_type))
            except (OverflowError, Warning):
                problems.append(Problem.at(at, f"a value is out of range for {type_name}",
                                           "write values the type can hold, or declare a wider data_type"))
                continue
            except (TypeError, ValueError) as exc:
                problems.append(Problem.at(at, f"value does not convert to {type_name} ({exc})",
                                           "write numbers (or strings) in nested lists"))
                continue
            dims = list(tensor.dims)
            if not dims or has_bad_dim(dims):
                continue   # no values can fit; the semantic check names the dims themselves as the cause
            shape = list(array.shape[1:]) if batched else list(array.shape)
            if len(shape) != len(dims) or any(d != -1 and d != s for d, s in zip(dims, shape)):
                batch = "[batch] + " if batched else ""
                problems.append(Problem.at(at, f"shape {list(array.shape)} does not fit {batch}dims {dims}",
                                           "nest the values to the declared shape"
                                           + (" with the batch dimension first" if batch else "")))
                continue
            out[name] = array
        return out

    def request(source: SmokeCases, at: Where, inputs: dict, outputs: dict) -> tuple[Tensors, Tensors]:
        return convert(inputs, "input", at.at("inputs"), source), convert(outputs, "output", at.at("outputs"), source)

    cases = [(source, Where(shown_path(source.file), f"{source.field}[{i}]"), case)
             for source in sources for i, case in enumerate(source.cases)]
    for number, (source, where, case) in enumerate(cases):
        name, tolerances = f"case{number:03d}", (case.atol, case.rtol)
        if case.sequence:
            steps = [request(source, where.at(f"sequence[{k}]"), s.inputs, s.outputs)
                     for k, s in enumerate(case.sequence)]
            golden.append(GoldenCase(name, "sequence", steps, [], *tolerances))
        elif case.stream:
            responses = [convert(r, "output", where.at(f"stream[{k}]"), source) for k, r in enumerate(case.stream)]
            golden.append(GoldenCase(name, "stream", [request(source, where, case.inputs, {})], responses, *tolerances))
        else:
            steps = [request(source, where, case.inputs, case.outputs)]
            golden.append(GoldenCase(name, "request", steps, [], *tolerances))
    return golden, problems


def read_tensor_file(path: Path) -> np.ndarray:
    """A `.npy` array as stored, or a mono 16-bit `.wav` as float32 PCM in [-1, 1] (its rate is the spec's to give)."""
    if path.suffix.lower() == ".npy":
        return np.load(path, allow_pickle=False)
    with wave.open(str(path), "rb") as w:
        if w.getnchannels() != 1 or w.getsampwidth() != 2:
            raise ValueError(f"expected mono 16-bit PCM, got {w.getnchannels()} channels "
                             f"of {8 * w.getsampwidth()} bits")
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768.0
