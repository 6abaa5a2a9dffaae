"""Loads a model source (python entry point, TorchScript file, ONNX file) with named example inputs.

Runs inside the export child, so importing user code and torch happens there. Inputs are always
named and ordered here, once, so exporters, verification and golden samples agree on names.
"""
import importlib
import importlib.util
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tritonkit.errors import Where
from tritonkit.export.errors import ExportError
from tritonkit.spec.export import ExampleDType, ExampleTensor

_NUMPY_OF_ONNX: dict[str, ExampleDType] = {"FLOAT": "float32", "FLOAT16": "float16", "DOUBLE": "float64",
                                           "INT64": "int64", "INT32": "int32", "INT8": "int8", "UINT8": "uint8",
                                           "BOOL": "bool"}


@dataclass
class Loaded:
    """A loaded source: the torch module (None for ONNX files), example inputs by graph name, call style.

    `call_names` are the keyword names forward() is called with (None: positional call); they differ from
    the graph names when the spec renames inputs.
    """

    module: Any
    example: dict[str, Any]
    call_names: list[str] | None
    onnx_path: Path | None = None


def resolve_entry_point(entry: str, project_dir: Path, python_path: list[str], where: Where) -> Any:
    """The function named by `package.module:function` or `path/to/file.py:function`."""
    module_part, func_name = entry.rsplit(":", 1)
    for folder in reversed(python_path):
        entry_dir = str((project_dir / folder).resolve())
        if entry_dir not in sys.path:
            sys.path.insert(0, entry_dir)
    try:
        if module_part.endswith(".py"):
            script = (project_dir / module_part).resolve()
            spec = importlib.util.spec_from_file_location(script.stem, script)
            if spec is None or spec.loader is None or not script.is_file():
                raise FileNotFoundError(script)
            module = importlib.util.module_from_spec(spec)
            sys.modules[script.stem] = module
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_part)
    except Exception as exc:
        raise ExportError.at(where, f"cannot import '{module_part}': {type(exc).__name__}: {exc}",
                             "check the module path and source.python_path (folders relative to the spec)") from exc
    func = getattr(module, func_name, None)
    if not callable(func):
        raise ExportError.at(where, f"'{module_part}' has no function '{func_name}'",
                             "name a function that returns (module, example_inputs)")
    return func


def _positional_names(module: Any, count: int) -> list[str]:
    """Input names from forward()'s parameters (TorchScript: its schema), else input_<i>."""
    try:
        if hasattr(module, "forward") and hasattr(module.forward, "schema"):
            names = [a.name for a in module.forward.schema.arguments[1:]]
        else:
            params = inspect.signature(module.forward).parameters.values()
            names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError, AttributeError):
        names = []
    return names[:count] if len(names) >= count else [f"input_{i}" for i in range(count)]


def name_inputs(module: Any, example: Any, rename: list[str] | None,
                model: Where) -> tuple[dict[str, Any], list[str] | None]:
    """(ordered {graph name: tensor}, call_names) from a tuple/list/dict/tensor example, with optional renaming."""
    import torch

    keyword = isinstance(example, dict)
    if isinstance(example, torch.Tensor):
        example = (example,)
    values = list(example.values()) if keyword else list(example)
    if not values or not all(isinstance(v, torch.Tensor) for v in values):
        raise ExportError.at(model.at("source.python"), "example inputs must be a non-empty tuple or dict of tensors",
                             "return (module, (tensor, ...)) or (module, {name: tensor})")
    names = list(example) if keyword else _positional_names(module, len(values))
    if rename is not None:
        if len(rename) != len(values):
            raise ExportError.at(model.at("export.input_names"),
                                 f"{len(rename)} names for {len(values)} inputs {names}",
                                 f"give exactly {len(values)} names")
        return dict(zip(rename, values)), (names if keyword else None)
    return dict(zip(names, values)), (names if keyword else None)


def from_entry_point(source: Any, project_dir: Path, rename: list[str] | None, model: Where) -> Loaded:
    """Imports and calls the entry point; the module is put in eval mode."""
    import torch

    where = model.at("source.python")
    func = resolve_entry_point(source.python, project_dir, source.python_path, where)
    try:
        built = func(**source.kwargs)
    except Exception as exc:
        detail = " ".join(str(exc).split())[:300]
        raise ExportError.at(where, f"{source.python} raised {type(exc).__name__}: {detail}",
                             "fix the entry point (the export log has the traceback)") from exc
    if not (isinstance(built, tuple) and len(built) == 2 and isinstance(built[0], torch.nn.Module)):
        raise ExportError.at(where, f"{source.python} returned {type(built).__name__}, "
                             "not (torch.nn.Module, example_inputs)",
                             "return a pair (module, example_inputs)")
    module = built[0].eval()
    example, call_names = name_inputs(module, built[1], rename, model)
    return Loaded(module, example, call_names)


def random_examples(specs: dict[str, Any], seed: int) -> dict[str, np.ndarray]:
    """Seeded random arrays from the spec's `example_inputs` entries."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, spec in specs.items():
        if spec.dtype == "bool":
            out[name] = rng.random(spec.shape) < 0.5
        elif spec.dtype.startswith(("int", "uint")):
            lo, hi = int(spec.low if spec.low is not None else 0), int(spec.high if spec.high is not None else 10)
            out[name] = rng.integers(lo, hi + 1, size=spec.shape).astype(spec.dtype)
        else:
            lo, hi = spec.low, spec.high
            ranged = lo is not None and hi is not None
            data = rng.uniform(lo, hi, spec.shape) if ranged else rng.standard_normal(spec.shape)
            out[name] = data.astype(spec.dtype)
    return out


def from_torchscript(source: Any, project_dir: Path, seed: int, model: Where) -> Loaded:
    """torch.jit.load on CPU, with random example inputs from `source.example_inputs`."""
    import torch

    path = (project_dir / source.torchscript).resolve()
    if not source.example_inputs:
        raise ExportError.at(model.at("source.example_inputs"),
                             "a TorchScript source needs example inputs to export and verify",
                             "add example_inputs: {name: {shape: [...], dtype: float32}} in forward order")
    try:
        module = torch.jit.load(str(path), map_location="cpu").eval()
    except Exception as exc:
        raise ExportError.at(model.at("source.torchscript"), f"cannot load {path}: {exc}".splitlines()[0],
                             "point at a file written by torch.jit.save") from exc
    example = {k: torch.from_numpy(v) for k, v in random_examples(source.example_inputs, seed).items()}
    return Loaded(module, example, call_names=None)


def from_onnx(source: Any, project_dir: Path, max_batch_size: int, seed: int, model: Where) -> Loaded:
    """An ONNX file; example inputs from the spec, else from the graph (dynamic dims: batch 2, others 4)."""
    import onnx

    path = (project_dir / source.onnx).resolve()
    if not path.is_file():
        raise ExportError.at(model.at("source.onnx"), f"ONNX file {path} not found", "give a path relative to the spec")
    if source.example_inputs:
        return Loaded(None, random_examples(source.example_inputs, seed), None, path)
    graph = onnx.load(str(path), load_external_data=False).graph
    initializers = {i.name for i in graph.initializer}
    specs = {}
    for value in graph.input:
        if value.name in initializers:
            continue
        elem = onnx.TensorProto.DataType.Name(value.type.tensor_type.elem_type)
        if elem not in _NUMPY_OF_ONNX:
            raise ExportError.at(model.at("source.example_inputs"),
                                 f"cannot invent values for input '{value.name}' of type {elem}",
                                 "give example_inputs for it")
        dims = value.type.tensor_type.shape.dim
        shape = [d.dim_value if d.HasField("dim_value") else (2 if i == 0 and max_batch_size > 0 else 4)
                 for i, d in enumerate(dims)]
        specs[value.name] = ExampleTensor(shape=shape, dtype=_NUMPY_OF_ONNX[elem])
    return Loaded(None, random_examples(specs, seed), None, path)
