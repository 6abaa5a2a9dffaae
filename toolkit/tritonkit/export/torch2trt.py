"""PyTorch -> Torch-TensorRT (a TorchScript module with TensorRT engines inside, for Triton's pytorch backend).

Needs the `torch_tensorrt` package and a CUDA GPU; gated like local TensorRT builds: where either is
missing the request fails in one line that names the portable alternative.
"""
import importlib.util
from pathlib import Path
from typing import Any

from tritonkit.errors import Where
from tritonkit.export.errors import TensorRTUnavailable, VerificationError
from tritonkit.export.job import ExportOutcome
from tritonkit.export.onnx2trt import profiles_for
from tritonkit.export.torch2onnx import make_adapter

TORCHSCRIPT_FILE = "model.pt"


def require_torch_tensorrt(model: str, where: Where) -> None:
    """One clear line when Torch-TensorRT cannot run here."""
    if importlib.util.find_spec("torch_tensorrt") is None:
        missing = "the torch_tensorrt package is not installed here"
    else:
        import torch

        if torch.cuda.is_available():
            return
        missing = "no CUDA GPU is visible here"
    raise TensorRTUnavailable.at(
        where.at("export.format"), f"model '{model}' asks for format torch_tensorrt but {missing}",
        "use format: tensorrt with export.tensorrt.mode: deferred "
        "(trtexec builds the engine in the TensorRT container)")


def compile_local(loaded: Any, result: ExportOutcome, options: Any, max_batch_size: int, out_dir: Path, *,
                  where: Where) -> dict[str, Any]:
    """Compiles the module with min/opt/max shapes from the TensorRT profile, checks it on the example, saves
    model.pt."""
    import numpy as np
    import torch
    import torch_tensorrt
    from torch.utils._pytree import tree_leaves


    require_torch_tensorrt(result.name, where)
    profile = profiles_for(result, options, max_batch_size)[0]
    example = {n: (v if isinstance(v, torch.Tensor) else torch.from_numpy(np.ascontiguousarray(v))).cuda()
               for n, v in loaded.example.items()}
    specs = [torch_tensorrt.Input(min_shape=profile.min[n], opt_shape=profile.opt[n], max_shape=profile.max[n],
                                  dtype=example[n].dtype) for n in example]
    precisions = {torch.float32} | ({torch.float16} if options.tensorrt.fp16 else set())
    adapter = make_adapter(loaded.module, loaded.call_names).cuda()
    compiled = torch_tensorrt.compile(adapter, ir="dynamo", inputs=specs, enabled_precisions=precisions)
    with torch.no_grad():
        want = adapter(*example.values())
        got = compiled(*example.values())
    names = [o.name for o in result.signature.outputs]
    errors: dict[str, dict[str, float]] = {}
    for name, ref, out in zip(names, tree_leaves(want), tree_leaves(got)):
        tol = options.tolerance.for_output(name)
        err = (out.float() - ref.float()).abs().max().item()
        errors[name] = {"max_abs": err}
        if not torch.allclose(out.float(), ref.float(), atol=tol.atol, rtol=tol.rtol):
            raise VerificationError.at(where.at("export.tolerance"), f"model '{result.name}': Torch-TensorRT output "
                                       f"'{name}' differs from PyTorch by {err:.3g}",
                                       "raise export.tolerance or disable fp16")
    torch_tensorrt.save(compiled, str(out_dir / TORCHSCRIPT_FILE), output_format="torchscript",
                        inputs=list(example.values()))
    return {"mode": "local", "engine": TORCHSCRIPT_FILE, "format": "torch_tensorrt", "max_errors": errors}
