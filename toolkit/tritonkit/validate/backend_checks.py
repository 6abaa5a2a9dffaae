"""Platform/backend pairing and `runtime`, resolved the way Triton 2.51 resolves them before a load.

Triton first fills `platform`/`backend` from `default_model_filename`, the model file in the version
folder or a model name of the form `name.<backend>` (AutoCompleteBackendFields, which runs even with
auto-complete disabled), then rejects pairs it knows to be wrong (ValidateModelConfig) and a `runtime`
that leaves the backend folder (TritonModel::GetBackendLibraryProperties).
"""
import difflib
import posixpath

from tritonkit.triton.layout import PLATFORMS, complete_backend_fields
from tritonkit.triton.model_config import pb
from tritonkit.validate.findings import Finding

_TF = "tensorflow"
# Backends whose platform Triton checks; any platform goes with any other backend.
_BACKEND_OF_PLATFORM = {platform: backend for platform, (backend, _) in PLATFORMS.items()}
_PLATFORMS = ", ".join([*_BACKEND_OF_PLATFORM, "ensemble"])
# Backends of the Triton 24.10 images (/opt/tritonserver/backends; vllm and tensorrtllm ship in their own
# images). Any other name loads only where a custom backend of that name is installed, so it is usually a typo.
KNOWN_BACKENDS = ("dali", "fil", "identity", "onnxruntime", "openvino", "python", "pytorch", "repeat", "square",
                  "tensorflow", "tensorrt", "tensorrtllm", "vllm")


def resolved_platform_backend(c: pb.ModelConfig) -> tuple[str, str] | None:
    """(platform, backend) after Triton's config-only fill-in, or None when the version folder's files decide."""
    if not c.platform and c.backend in ("", _TF) and not c.default_model_filename:
        return None
    filled = complete_backend_fields(c.name, None, c)
    return filled.platform, filled.backend


def check_backend(name: str, c: pb.ModelConfig, resolved: tuple[str, str] | None) -> list[Finding]:
    """Findings on `platform`, `backend` and `runtime` (Triton's meaning, see the module docstring);
    `resolved` is resolved_platform_backend(c), which the caller needs too."""
    found = _check_pair(name, c, resolved)
    if resolved and resolved[1] and resolved[1] not in KNOWN_BACKENDS:
        close = difflib.get_close_matches(resolved[1], KNOWN_BACKENDS, n=1)
        fix = f"did you mean '{close[0]}'?" if close else f"use one of {', '.join(KNOWN_BACKENDS)}"
        found.append(Finding(name, "backend", f"no Triton image ships a backend '{resolved[1]}', so Triton loads it "
                             "only where a custom backend of that name is installed",
                             f"{fix} (a custom backend goes in the server's backends folder)", "warning"))
    filename = c.default_model_filename
    if resolved and resolved[1] == "python" and filename and not filename.endswith(".py"):
        found.append(Finding(name, "default_model_filename", f"'{c.default_model_filename}' is not a .py file, which "
                             "the Python backend refuses", "name the Python model file "
                             "<name>.py (the default is model.py)"))
    runtime = c.runtime
    if runtime and runtime != "model.py" and posixpath.normpath(runtime.lstrip("/")).split("/")[0] == "..":
        found.append(Finding(name, "runtime", f"'{runtime}' escapes the backend folder, which Triton refuses", "name a "
                             "library inside the backend folder (e.g. libtriton_<backend>.so) or leave runtime unset"))
    return found


def _check_pair(name: str, c: pb.ModelConfig, resolved: tuple[str, str] | None) -> list[Finding]:
    if resolved is None:
        if c.backend == _TF:
            return [Finding(name, "platform", "backend 'tensorflow' without platform: Triton takes the platform from "
                            "model.savedmodel or model.graphdef in the version folder and fails without one",
                            "set platform: tensorflow_savedmodel or tensorflow_graphdef", "warning")]
        if "." in name:
            return []  # Triton takes the backend from the name `model.<backend>`
        return [Finding(name, "backend", "neither platform nor backend is set: Triton takes the backend from the "
                        "model file in the version folder (model.onnx, model.py, ...) and fails without one",
                        "set backend (e.g. python, onnxruntime) or platform (e.g. ensemble)", "warning")]
    platform, backend = resolved
    if not backend and platform != "ensemble":
        if not platform:
            return [Finding(name, "default_model_filename", "neither platform nor backend is set and "
                            f"'{c.default_model_filename}' names no backend Triton knows",
                            "set backend (e.g. python, onnxruntime) or platform")]
        return [Finding(name, "platform",
                        f"unknown platform '{platform}' without a backend (Triton knows {_PLATFORMS})",
                        "set backend, or use a known platform")]
    if backend and platform == "ensemble":
        return [Finding(name, "backend", f"an ensemble must have an empty backend, got '{backend}'",
                        "remove backend (platform: ensemble runs the steps itself)")]
    expected = _BACKEND_OF_PLATFORM.get(platform)
    if backend in _BACKEND_OF_PLATFORM.values() and expected != backend:
        fits = [p for p, b in _BACKEND_OF_PLATFORM.items() if b == backend]
        implied = f"default_model_filename '{c.default_model_filename}' implies none"
        problem = (f"platform '{platform}' does not go with backend '{backend}'" if platform
                   else f"backend '{backend}' needs a platform and {implied}")
        return [Finding(name, "platform", problem, f"use platform {' or '.join(fits)}")]
    return []
