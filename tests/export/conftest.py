"""Export fixtures: real exports of the example models (torch + onnxruntime in a child process), once per session."""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnx
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # `examples` is a package at the repository root, as in a user's project
    sys.path.insert(0, str(REPO_ROOT))

from examples.models.catalog import EXAMPLES as CATALOG  # noqa: E402
from tritonkit.export import ExportJob, ExportResult, export_model  # noqa: E402
from tritonkit.export.progress import SilentProgress  # noqa: E402
from tritonkit.spec.export import ExportSpec, SourceSpec  # noqa: E402

#: The example models (MiniLM has its own slow test): (source, export options, max_batch_size).
EXAMPLES: dict[str, tuple[dict[str, Any], dict[str, Any], int]] = {
    name: (spec["source"], spec["export"], spec["max_batch_size"]) for name, spec in CATALOG.items() if name != "minilm"
}


class Exporter:
    """Runs export_model into a per-session model repository; results are memoized by model name."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cache_dir = root / ".tritonkit" / "cache" / "export"
        self.results: dict[str, ExportResult] = {}

    def __call__(self, name: str, source: dict[str, Any], options: dict[str, Any], max_batch_size: int,
                 project_dir: Path = REPO_ROOT, cache_dir: Path | None = None, **kwargs: Any) -> ExportResult:
        job = ExportJob(name, SourceSpec.model_validate(source), ExportSpec.model_validate(options), max_batch_size,
                        project_dir)
        return export_model(job, self.root / "repo" / name / "1", self.root / "repo" / name / "golden",
                            cache_dir or self.cache_dir, SilentProgress(), **kwargs)

    def example(self, name: str) -> ExportResult:
        if name not in self.results:
            source, options, mbs = EXAMPLES[name]
            self.results[name] = self(name, source, options, mbs)
        return self.results[name]


@pytest.fixture(scope="session")
def exporter(tmp_path_factory: pytest.TempPathFactory) -> Exporter:
    return Exporter(tmp_path_factory.mktemp("export"))


def graph_io(path: Path) -> dict[str, tuple[int, list[int | str]]]:
    """Independent reading of an ONNX file's I/O: name -> (elem type, dims with dim_param strings)."""
    graph = onnx.load(str(path), load_external_data=False).graph
    out = {}
    for value in [*graph.input, *graph.output]:
        tt = value.type.tensor_type
        out[value.name] = (tt.elem_type, [d.dim_param if d.dim_param else d.dim_value for d in tt.shape.dim])
    return out


@pytest.fixture
def write_module(tmp_path: Path) -> Callable[[str, str], Path]:
    """Writes a Python module into a temporary project folder and returns the folder."""

    def write(name: str, code: str) -> Path:
        (tmp_path / f"{name}.py").write_text(code)
        return tmp_path

    return write
