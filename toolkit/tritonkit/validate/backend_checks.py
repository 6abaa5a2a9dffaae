"""Platform/backend pairing and `runtime`, resolved the way Triton 2.51 resolves them before a load.

Triton first fills `platform`/`backend` from `default_model_filename`, the model file in the version
folder or a model name of the form `name.<backend>` (AutoCompleteBackendFields, which runs even with
auto-complete disabled), then rejects pairs it knows to be wrong (ValidateModelConfig) and a `runtime`
that leaves the backend folder (TritonModel::GetBackendLibraryProperties).
"""
from __future__ import annotations

import posixpath

from tritonkit.model_config import pb
from tritonkit.validate.findings import Finding

_TF = "tensorflow"
_TF_PLATFORM_OF_FILE = {"model.savedmodel": "tensorflow_savedmodel", "model.graphdef": "tensorflow_graphdef"}
# backend -> (platform Triton fills in, model file that implies the backend)
_FILLED = {
    "tensorrt": ("tensorrt_plan", "model.plan"),
    "onnxruntime": ("onnxruntime_onnx", "model.onnx"),
    "openvino": ("", "model.xml"),
    "pytorch": ("pytorch_libtorch", "model.pt"),
    "python": ("", "model.py"),
}
# Backends whose platform Triton checks; any platform goes with any other backend.
_BACKEND_OF_PLATFORM = {
    "tensorflow_graphdef": _TF, "tensorflow_savedmodel": _TF, "tensorrt_plan": "tensorrt",
    "onnxruntime_onnx": "onnxruntime", "pytorch_libtorch": "pytorch",
}
_PLATFORMS = ", ".join([*_BACKEND_OF_PLATFORM, "ensemble"])


def resolved_platform_backend(c: pb.ModelConfig) -> tuple[str, str] | None:
    """(platform, backend) after Triton's config-only fill-in, or None when the version folder's files decide."""
    platform, backend, filename = c.platform, c.backend, c.default_model_filename
    if not platform and backend in ("", _TF):
        if filename in _TF_PLATFORM_OF_FILE:
            return _TF_PLATFORM_OF_FILE[filename], _TF
        if not filename:
            return None
    if _BACKEND_OF_PLATFORM.get(platform) == _TF:
        return platform, backend or _TF
    for name, (filled_platform, model_file) in _FILLED.items():
        implied = filename == model_file or (filled_platform and platform == filled_platform)
        if backend == name or (not backend and implied):
            return platform or filled_platform, name
    return platform, backend


def check_backend(name: str, c: pb.ModelConfig) -> list[Finding]:
    """Findings on `platform`, `backend` and `runtime` (Triton's meaning, see the module docstring)."""
    found = _check_pair(name, c)
    resolved = resolved_platform_backend(c)
    if resolved and resolved[1] == "python" and c.default_model_filename and not c.default_model_filename.endswith(".py"):
        found.append(Finding(name, "default_model_filename", f"'{c.default_model_filename}' is not a .py file, which the Python backend refuses", "name the Python model file <name>.py (the default is model.py)"))
    runtime = c.runtime
    if runtime and runtime != "model.py" and posixpath.normpath(runtime.lstrip("/")).split("/")[0] == "..":
        found.append(Finding(name, "runtime", f"'{runtime}' escapes the backend folder, which Triton refuses", "name a library inside the backend folder (e.g. libtriton_<backend>.so) or leave runtime unset"))
    return found


def _check_pair(name: str, c: pb.ModelConfig) -> list[Finding]:
    resolved = resolved_platform_backend(c)
    if resolved is None:
        if c.backend == _TF:
            return [Finding(name, "platform", "backend 'tensorflow' without platform: Triton takes the platform from model.savedmodel or model.graphdef in the version folder and fails without one", "set platform: tensorflow_savedmodel or tensorflow_graphdef", "warning")]
        if "." in name:
            return []  # Triton takes the backend from the name `model.<backend>`
        return [Finding(name, "backend", "neither platform nor backend is set: Triton takes the backend from the model file in the version folder (model.onnx, model.py, ...) and fails without one", "set backend (e.g. python, onnxruntime) or platform (e.g. ensemble)", "warning")]
    platform, backend = resolved
    if not backend and platform != "ensemble":
        if not platform:
            return [Finding(name, "default_model_filename", f"neither platform nor backend is set and '{c.default_model_filename}' names no backend Triton knows", "set backend (e.g. python, onnxruntime) or platform")]
        return [Finding(name, "platform", f"unknown platform '{platform}' without a backend (Triton knows {_PLATFORMS})", "set backend, or use a known platform")]
    if backend and platform == "ensemble":
        return [Finding(name, "backend", f"an ensemble must have an empty backend, got '{backend}'", "remove backend (platform: ensemble runs the steps itself)")]
    expected = _BACKEND_OF_PLATFORM.get(platform)
    if backend in _BACKEND_OF_PLATFORM.values() and expected != backend:
        fits = [p for p, b in _BACKEND_OF_PLATFORM.items() if b == backend]
        problem = f"platform '{platform}' does not go with backend '{backend}'" if platform else f"backend '{backend}' needs a platform and default_model_filename '{c.default_model_filename}' implies none"
        return [Finding(name, "platform", problem, f"use platform {' or '.join(fits)}")]
    return []
