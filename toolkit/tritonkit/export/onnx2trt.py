"""ONNX -> TensorRT engine: here with TensorRT's Python API (`local`), or at deploy time with `trtexec`
in the official TensorRT container (`deferred`: the compose file runs `trtexec_command(...)` before tritonserver).

Engines are tied to a GPU model and TensorRT version, so building where the server runs is often the
right call; `local` is for machines that have both TensorRT and the target GPU.
"""
import importlib.util
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tritonkit.errors import Where
from tritonkit.export.cases import default_lengths
from tritonkit.export.errors import TensorRTUnavailable, VerificationError
from tritonkit.export.job import ExportOutcome
from tritonkit.export.verify import beyond_tolerance, differences

ENGINE_FILE = "model.plan"


@dataclass
class ShapeProfile:
    """One optimization profile: full input shapes (batch included) per input name."""

    min: dict[str, list[int]]
    opt: dict[str, list[int]]
    max: dict[str, list[int]]


def tensorrt_available() -> bool:
    """Whether the `tensorrt` Python package can be imported here (a GPU is needed too, to build)."""
    return importlib.util.find_spec("tensorrt") is not None


def require_local_tensorrt(model: str, where: Where) -> None:
    """Fails fast, in one line that names the alternative, when a local engine build cannot run here."""
    if not tensorrt_available():
        raise TensorRTUnavailable.at(
            where.at("export.tensorrt.mode"),
            f"model '{model}' asks for a local TensorRT build but TensorRT is not installed here "
            "(no module 'tensorrt')", "set export.tensorrt.mode: deferred to build the engine with trtexec "
            "in the TensorRT container at deploy time")


def default_profile(example_shapes: dict[str, list[int]], axes: dict[str, dict[int, str]], max_batch_size: int,
                    lengths: dict[str, list[int]]) -> ShapeProfile:
    """Batch 1..max_batch_size (opt: max), named dims from their smallest to largest verify length (opt: example)."""
    lo: dict[str, list[int]] = {}
    mid: dict[str, list[int]] = {}
    hi: dict[str, list[int]] = {}
    for name, shape in example_shapes.items():
        lo[name], mid[name], hi[name] = list(shape), list(shape), list(shape)
        for axis, dim in axes.get(name, {}).items():
            if dim == "batch" and max_batch_size > 0 and axis == 0:
                lo[name][0], mid[name][0], hi[name][0] = 1, max_batch_size, max_batch_size
                continue
            sizes = [shape[axis], *(lengths.get(dim) or default_lengths(shape[axis]))]
            lo[name][axis], hi[name][axis] = min(sizes), max(sizes)
    return ShapeProfile(lo, mid, hi)


def profiles_for(result: ExportOutcome, options: Any, max_batch_size: int) -> list[ShapeProfile]:
    """The spec's profiles, or the default one computed from the export's example shapes and dynamic axes."""
    if options.tensorrt.profiles:
        return [ShapeProfile(p.min, p.opt, p.max) for p in options.tensorrt.profiles]
    return [default_profile(result.example_shapes, result.dynamic_axes, max_batch_size, options.verify.lengths)]


def _shapes_arg(shapes: dict[str, list[int]]) -> str:
    return ",".join(f"{name}:{'x'.join(str(d) for d in dims)}" for name, dims in shapes.items())


def trtexec_command(onnx_path: str, engine_path: str, profiles: list[ShapeProfile], *, fp16: bool = False,
                    int8: bool = False, workspace_mb: int = 1024) -> list[str]:
    """The trtexec argv that builds `engine_path` from `onnx_path` (paths as seen where trtexec runs)."""
    argv = ["trtexec", f"--onnx={onnx_path}", f"--saveEngine={engine_path}"]
    for profile in profiles:
        if profile.min:
            argv += [f"--minShapes={_shapes_arg(profile.min)}", f"--optShapes={_shapes_arg(profile.opt)}",
                     f"--maxShapes={_shapes_arg(profile.max)}"]
    precision = [flag for flag, wanted in (("--fp16", fp16), ("--int8", int8)) if wanted]
    return [*argv, *precision, f"--memPoolSize=workspace:{workspace_mb}M"]


def deferred_plan(result: ExportOutcome, options: Any, max_batch_size: int) -> dict[str, Any]:
    """What the compose step needs to build the engine at deploy time (paths relative to the version dir)."""
    profiles = profiles_for(result, options, max_batch_size)
    trt = options.tensorrt
    return {"mode": "deferred", "onnx": "model.onnx", "engine": ENGINE_FILE, "profiles": [asdict(p) for p in profiles],
            "fp16": trt.fp16, "int8": trt.int8, "workspace_mb": trt.workspace_mb,
            "command": trtexec_command("model.onnx", ENGINE_FILE, profiles, fp16=trt.fp16, int8=trt.int8,
                                       workspace_mb=trt.workspace_mb)}


def build_engine(onnx_path: Path, engine_path: Path, profiles: list[ShapeProfile], *, fp16: bool = False,
                 int8: bool = False, workspace_mb: int = 1024) -> Path:
    """Builds and serializes an engine with TensorRT's Python API (TensorRT 10 and 8.6 both work)."""
    import tensorrt as trt

    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    flags = 0
    if hasattr(trt.NetworkDefinitionCreationFlag, "EXPLICIT_BATCH") and int(trt.__version__.split(".")[0]) < 10:
        flags = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
    network = builder.create_network(flags)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(str(onnx_path)):
        errors = "; ".join(str(parser.get_error(i)) for i in range(parser.num_errors))
        raise RuntimeError(f"TensorRT cannot parse {onnx_path.name}: {errors}")
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, workspace_mb * 1024 * 1024)
    if fp16:
        config.set_flag(trt.BuilderFlag.FP16)
    if int8:
        config.set_flag(trt.BuilderFlag.INT8)
    for shapes in profiles:
        if not shapes.min:
            continue
        profile = builder.create_optimization_profile()
        for name in shapes.min:
            profile.set_shape(name, shapes.min[name], shapes.opt[name], shapes.max[name])
        config.add_optimization_profile(profile)
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        raise RuntimeError("TensorRT returned no engine (see the log above for the failing layer)")
    with open(engine_path, "wb") as handle:
        handle.write(serialized)
    return engine_path


def run_engine(engine_path: Path, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Runs a serialized engine once on the GPU (buffers are torch CUDA tensors); returns host outputs."""
    import tensorrt as trt
    import torch

    logger = trt.Logger(trt.Logger.WARNING)
    engine = trt.Runtime(logger).deserialize_cuda_engine(engine_path.read_bytes())
    context = engine.create_execution_context()
    keep: list[Any] = []
    names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
    for name in names:
        if engine.get_tensor_mode(name) == trt.TensorIOMode.INPUT:
            tensor = torch.from_numpy(np.ascontiguousarray(inputs[name])).cuda()
            context.set_input_shape(name, tuple(tensor.shape))
            context.set_tensor_address(name, tensor.data_ptr())
            keep.append(tensor)
    outputs: dict[str, Any] = {}
    for name in names:
        if engine.get_tensor_mode(name) == trt.TensorIOMode.OUTPUT:
            dtype = torch.from_numpy(np.zeros(0, dtype=trt.nptype(engine.get_tensor_dtype(name)))).dtype
            outputs[name] = torch.empty(tuple(context.get_tensor_shape(name)), dtype=dtype, device="cuda")
            context.set_tensor_address(name, outputs[name].data_ptr())
    stream = torch.cuda.Stream()
    if not context.execute_async_v3(stream.cuda_stream):
        raise RuntimeError("TensorRT execution failed")
    stream.synchronize()
    return {name: tensor.cpu().numpy() for name, tensor in outputs.items()}


def build_local(out_dir: Path, result: ExportOutcome, options: Any, max_batch_size: int,
                pairs: list[tuple[dict[str, np.ndarray], dict[str, np.ndarray]]], *, where: Where,
                progress: Callable[[str], None]) -> dict[str, Any]:
    """Builds model.plan next to model.onnx and replays the golden pairs through it within the spec's tolerance."""
    require_local_tensorrt(result.name, where)
    profiles = profiles_for(result, options, max_batch_size)
    trt_opts = options.tensorrt
    build_engine(out_dir / "model.onnx", out_dir / ENGINE_FILE, profiles, fp16=trt_opts.fp16, int8=trt_opts.int8,
                 workspace_mb=trt_opts.workspace_mb)
    errors: dict[str, dict[str, float]] = {}
    for number, (inputs, expected) in enumerate(pairs, 1):
        progress(f"tensorrt verify {number}/{len(pairs)}")
        got = run_engine(out_dir / ENGINE_FILE, inputs)
        for name, ref in expected.items():
            tol = options.tolerance.for_output(name)
            max_abs, max_rel, diff = differences(got[name].astype(ref.dtype, copy=False), ref)
            entry = errors.setdefault(name, {"max_abs": 0.0, "max_rel": 0.0})
            entry["max_abs"], entry["max_rel"] = max(entry["max_abs"], max_abs), max(entry["max_rel"], max_rel)
            if beyond_tolerance(diff, ref, tol.atol, tol.rtol).any():
                shapes = " ".join(f"{k}={list(v.shape)}" for k, v in inputs.items())
                raise VerificationError.at(where.at("export.tolerance"),
                                           f"model '{result.name}': TensorRT output '{name}' differs from PyTorch "
                                           f"at inputs {shapes}: max abs error {max_abs:.3g} > atol {tol.atol:g} "
                                           f"+ rtol {tol.rtol:g}",
                                           "raise export.tolerance for fp16/int8 engines or build without fp16")
    return {"mode": "local", "engine": ENGINE_FILE, "profiles": [asdict(p) for p in profiles], "max_errors": errors,
            "fp16": trt_opts.fp16, "int8": trt_opts.int8, "workspace_mb": trt_opts.workspace_mb}
