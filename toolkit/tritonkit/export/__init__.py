"""PyTorch -> ONNX (-> TensorRT) export, numerically verified, that drives a model's config inputs and outputs.

Modules are named by what they do: `torch2onnx`, `onnx2trt`, `torch2trt` convert; `verify` compares with
PyTorch; `signature` reads the graph's inputs/outputs; `cache`, `isolation` and `golden` make exports
cheap to repeat, safe to crash and replayable. Importing this package does not import torch.
"""
from tritonkit.export.api import ExportResult, export_model
from tritonkit.export.errors import ExportCrashed, ExportError, SignatureError, TensorRTUnavailable, VerificationError
from tritonkit.export.job import ExportJob, ExportOutcome
from tritonkit.export.onnx2trt import ShapeProfile, tensorrt_available, trtexec_command
from tritonkit.export.signature import Signature, TensorSig, read_signature, reconcile

__all__ = [
    "ExportCrashed", "ExportError", "ExportJob", "ExportOutcome", "ExportResult", "ShapeProfile", "Signature",
    "SignatureError", "TensorRTUnavailable", "TensorSig", "VerificationError", "export_model", "read_signature",
    "reconcile", "tensorrt_available", "trtexec_command",
]
