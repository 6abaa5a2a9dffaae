"""Export failures as located, one-line errors (subclasses of the project's TritonkitError)."""
from tritonkit.errors import TritonkitError


class ExportError(TritonkitError):
    """An export step failed for a reason the user can act on."""


class SignatureError(ExportError):
    """The spec's inputs/outputs contradict the exported graph."""


class VerificationError(ExportError):
    """ONNX Runtime and PyTorch disagree on an output (or the graph itself is invalid)."""


class ExportCrashed(ExportError):
    """The isolated export process died or timed out; points at its log and reproduce script."""

    def __init__(self, file: str, field: str, problem: str, fix: str, log_path: str = "",
                 reproduce_path: str = "") -> None:
        super().__init__(file, field, problem, fix)
        self.log_path = log_path
        self.reproduce_path = reproduce_path


class TensorRTUnavailable(ExportError):
    """A local TensorRT (or Torch-TensorRT) build was asked for where it cannot run."""


#: Error classes a child process may report back by name (see `child.py`).
BY_NAME: dict[str, type[ExportError]] = {
    cls.__name__: cls for cls in (ExportError, SignatureError, VerificationError, TensorRTUnavailable)
}
