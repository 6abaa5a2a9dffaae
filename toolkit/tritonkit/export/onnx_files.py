"""Writing an exported graph: model.onnx, with its weights in model.onnx.data beside it when asked.

onnx creates the external data file private (0600); a Triton container serving the repository as another uid
could then read model.onnx but not its weights, so the data file gets a new file's usual mode.
"""
from pathlib import Path
from typing import Any

from tritonkit.files import created_mode


def save_onnx(model: Any, path: Path, external: bool) -> list[Path]:
    """Saves `model` at `path` (weights in `<name>.data` when `external`, else inline); returns the files written."""
    import onnx

    data = path.with_name(f"{path.name}.data")
    data.unlink(missing_ok=True)
    if not external:
        onnx.save_model(model, str(path))
        return [path]
    onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True, location=data.name,
                    size_threshold=0)
    data.chmod(created_mode())
    return [path, data]
