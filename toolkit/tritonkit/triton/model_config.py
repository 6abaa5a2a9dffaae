"""Triton's `ModelConfig` protobuf module, loaded without tritonclient's gRPC client stack.

`tritonclient.grpc.model_config_pb2` lives inside a package whose `__init__` imports grpc and numpy
(about 0.1 s), which `tritonkit validate` and `--help` must not pay. The generated module itself only
needs protobuf, so it is loaded straight from its file and registered under its usual name, so that a
later `import tritonclient.grpc` shares the same classes.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

_NAME = "tritonclient.grpc.model_config_pb2"


def _load() -> ModuleType:
    """The generated module, from sys.modules when tritonclient.grpc is already imported."""
    if _NAME in sys.modules:
        return sys.modules[_NAME]
    root = importlib.util.find_spec("tritonclient")
    if root is None or not root.submodule_search_locations:
        raise ImportError("tritonclient is not installed; pip install 'tritonclient[all]==2.51.0'")
    path = Path(list(root.submodule_search_locations)[0]) / "grpc" / "model_config_pb2.py"
    spec = importlib.util.spec_from_file_location(_NAME, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[_NAME] = module
    spec.loader.exec_module(module)
    return module


if TYPE_CHECKING:
    from tritonclient.grpc import model_config_pb2 as pb
else:
    pb = _load()


def int_parameter(config: pb.ModelConfig, key: str) -> int:
    """A non-negative integer `parameters` value of the config (surrounding spaces allowed), else 0."""
    param = config.parameters.get(key)
    value = param.string_value.strip() if param is not None else ""
    return int(value) if value.isdigit() else 0
