"""PyTorch -> ONNX with torch.export (`dynamo`) or the TorchScript tracer (`torchscript`).

Both exporters see the same flat adapter (positional tensors in, a flat tuple of tensors out), so
names, dynamic axes and verification do not depend on how the user's forward() is shaped.
"""
import math
import tempfile
from pathlib import Path
from typing import Any

from tritonkit.export.onnx_files import save_onnx
from tritonkit.export.reproducible import strip_locations

#: Initializer bytes above which weights go to model.onnx.data (protobuf's hard limit is 2 GB in all).
EXTERNAL_THRESHOLD = 2 * 1024**3 - 64 * 1024**2


def _torch() -> Any:
    import torch

    return torch


def make_adapter(module: Any, call_names: list[str] | None) -> Any:
    """Wraps `module`: forward(*tensors) -> flat tuple of output tensors (dicts flattened in key order).

    A TorchScript module called positionally is returned as is: the tracer cannot trace through a script
    module nested in a Python one, and the exporters flatten its outputs themselves.
    """
    torch = _torch()
    from torch.utils import _pytree

    if isinstance(module, torch.jit.ScriptModule) and not call_names:
        return module

    module_base: Any = torch.nn.Module

    class FlatAdapter(module_base):
        def __init__(self) -> None:
            super().__init__()
            self.inner = module

        def forward(self, *args: Any) -> tuple[Any, ...]:
            out = self.inner(**dict(zip(call_names, args))) if call_names else self.inner(*args)
            return tuple(_pytree.tree_leaves(out))

    return FlatAdapter().eval()


def output_names_of(module: Any, example: dict[str, Any], call_names: list[str] | None,
                    rename: list[str] | None) -> list[str]:
    """Names for the flattened outputs: the spec's, else a top-level dict's keys, else output / output_<i>."""
    torch = _torch()
    from torch.utils import _pytree

    with torch.no_grad():
        values = list(example.values())
        out = module(**dict(zip(call_names, values))) if call_names else module(*values)
    leaves = _pytree.tree_leaves(out)
    if rename is not None:
        if len(rename) != len(leaves):
            raise ValueError(f"export.output_names has {len(rename)} names but the model returns {len(leaves)} tensors")
        return list(rename)
    if isinstance(out, dict) and len(out) == len(leaves):
        return [str(k) for k in out]
    return ["output"] if len(leaves) == 1 else [f"output_{i}" for i in range(len(leaves))]


def first_line(exc: BaseException) -> str:
    """The informative line of an exporter error (torch.export wraps the cause under 'Exception summary')."""
    text = str(exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if "## Exception summary" in text:
        after = text.split("## Exception summary", 1)[1]
        lines = [ln.strip() for ln in after.splitlines() if ln.strip()] or lines
    head = lines[0] if lines else ""
    return f"{type(exc).__name__}: {head}"[:400]


def export_dynamo(adapter: Any, args: tuple[Any, ...], input_names: list[str], output_names: list[str],
                  axes: dict[str, dict[int, str]], opset: int, path: Path) -> None:
    """torch.onnx.export(dynamo=True) with one torch.export.Dim per dynamic dim name (shared by name)."""
    torch = _torch()
    from torch.export import Dim

    dims: dict[str, Any] = {}
    per_input = tuple(
        {axis: dims.setdefault(name, Dim(name)) for axis, name in axes.get(n, {}).items()} or None for n in input_names
    )
    torch.onnx.export(adapter, args, str(path), dynamo=True, input_names=input_names, output_names=output_names,
                      opset_version=opset, dynamic_shapes=(per_input,), external_data=True, verbose=False)


def export_torchscript(adapter: Any, args: tuple[Any, ...], input_names: list[str], output_names: list[str],
                       axes: dict[str, dict[int, str]], opset: int, path: Path) -> None:
    """torch.onnx.export(dynamo=False): the tracer; handles RNNs over dynamic lengths, bakes Python branches."""
    torch = _torch()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(adapter, args, str(path), dynamo=False, input_names=input_names, output_names=output_names,
                          opset_version=opset, dynamic_axes={k: dict(v) for k, v in axes.items() if v},
                          do_constant_folding=True)


def initializer_bytes(model: Any) -> int:
    """Bytes of all initializers (raw or typed fields) of a loaded ModelProto."""
    import onnx
    from onnx import helper

    total = 0
    for init in model.graph.initializer:
        if init.raw_data:
            total += len(init.raw_data)
        elif init.data_type != onnx.TensorProto.STRING:
            total += math.prod(init.dims) * helper.tensor_dtype_to_np_dtype(init.data_type).itemsize
    return total


def finalize(tmp_path: Path, out_dir: Path, external: str) -> list[Path]:
    """Saves the exported graph as out_dir/model.onnx, weights in model.onnx.data when over 2 GB (or `always`),
    without the build's paths."""
    import onnx

    model = onnx.load(str(tmp_path))
    strip_locations(model)  # byte-identical when built in another folder (reproducible.py)
    return save_onnx(model, out_dir / "model.onnx",
                     external == "always" or initializer_bytes(model) > EXTERNAL_THRESHOLD)


EXPORTERS = {"dynamo": export_dynamo, "torchscript": export_torchscript}


def export(exporter: str, adapter: Any, args: tuple[Any, ...], input_names: list[str], output_names: list[str],
           axes: dict[str, dict[int, str]], opset: int, out_dir: Path, external: str) -> list[Path]:
    """Runs one exporter into a temporary folder, then writes the final model.onnx (+ data) into out_dir."""
    torch = _torch()
    with tempfile.TemporaryDirectory(prefix="tritonkit-onnx-") as workdir:
        tmp = Path(workdir) / "model.onnx"
        with torch.no_grad():
            EXPORTERS[exporter](adapter, args, input_names, output_names, axes, opset, tmp)
        return finalize(tmp, out_dir, external)
