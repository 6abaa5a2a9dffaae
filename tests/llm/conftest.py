"""LLM pipeline fixtures: decoders exported once per session, example projects built and served.

The tiny GPT (random weights, byte tokenizer) exports in seconds and carries most tests; SmolLM2 tests are
marked slow. `prepared` exports with the exporter's API (cache under <repo>/.tritonkit) for in-process tests;
the served tests build the example specs, whose `source:` the build exports. Every server started is stopped.
"""
from __future__ import annotations

import importlib.util
import platform
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import missing

if importlib.util.find_spec("torch") is None or importlib.util.find_spec("tokenizers") is None:
    missing("the LLM pipeline tests need: pip install 'tritonkit[export,llm]'")

REPO_ROOT = Path(__file__).resolve().parents[2]
EXPORT_CACHE = REPO_ROOT / ".tritonkit" / "cache" / "export"


@pytest.fixture(scope="session")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """prepared("tiny") -> folder with model.onnx, tokenizer.json, generation.json (exported once per session)."""
    from tritonkit.pipelines.llm.export.prepare import prepare

    folders: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in folders:
            out = tmp_path_factory.mktemp(f"llm-{name}") / "model"
            prepare(name, out, EXPORT_CACHE)
            folders[name] = out
        return folders[name]

    return get


@pytest.fixture(scope="module")
def tiny(prepared: Callable[[str], Path]) -> Path:
    """The tiny GPT's prepared folder (model.onnx, tokenizer.json, generation.json)."""
    return prepared("tiny")


@pytest.fixture(scope="module")
def decoder(tiny: Path) -> Any:
    """The tiny GPT's ONNX decoder on one thread (an OnnxDecoder)."""
    from tritonkit.pipelines.llm.runtime.decoder import OnnxDecoder

    return OnnxDecoder(tiny / "model.onnx", intra_op_threads=1)


@pytest.fixture(scope="module")
def codec(tiny: Path) -> Any:
    """The tiny GPT's tokenizer (a TextCodec)."""
    from tritonkit.pipelines.llm.runtime.text import TextCodec

    return TextCodec(tiny / "tokenizer.json")


def write_spec(folder: Path, model: str, assets_dir: Path | None = None,
               generate_parameters: dict[str, Any] | None = None,
               generate_overrides: dict[str, Any] | None = None, quantized: bool = False) -> Path:
    """examples/llm/<model>/tritonkit.yaml copied into `folder` over a copy of ensembles/llm.yaml with
    `generate_parameters` merged in and `generate_overrides` replacing fields of generate. Building it exports
    the decoder (once per session: the cache is there). Served float32 (`quantize: none`) unless `quantized`
    (the specs' int4 default): most tests compare served tokens with PyTorch's, token for token."""
    from examples.llm.project import write_project

    overrides = dict(generate_overrides or {})
    if not quantized:
        overrides.setdefault("export", {**recipe_export(model), "quantize": "none"})
    return write_project(folder, model, assets_dir, generate_parameters, overrides)


def recipe_export(model: str) -> dict[str, Any]:
    """generate's `export:` section in the recipe's spec (the starter's for tiny)."""
    import yaml

    from examples.llm.project import RECIPES

    return dict(yaml.safe_load(RECIPES[model][0].read_text())["models"]["generate"]["export"])


def build_repository(spec: Path) -> Path:
    """`tritonkit build` as a function (export included); returns the repository folder."""
    from tritonkit.export.progress import SilentProgress
    from tritonkit.repository.build import build

    return build(spec, progress=SilentProgress()).repository


@pytest.fixture(scope="module")
def serve() -> Iterator[Callable[[Path], Any]]:
    """serve(repository) -> a started EmbeddedServer; all are stopped when the module's tests end."""
    from tritonkit.serve.server import EmbeddedServer

    servers = []

    def start(repository: Path) -> EmbeddedServer:
        server = EmbeddedServer(repository, work_dir=repository.parent / ".tritonkit", startup_timeout=240)
        servers.append(server)
        return server.start()

    yield start
    for server in servers:
        server.stop()


def huge_pages_refused() -> str | None:
    """Why this kernel makes no huge pages for pages.to_huge_pages (no MADV_COLLAPSE before Linux 6.1, or
    transparent huge pages off), or None."""
    setting = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if not setting.exists() or "[never]" in setting.read_text():
        return "transparent huge pages are off here"
    major, minor = (int(x) for x in platform.release().split(".")[:2])
    return "MADV_COLLAPSE needs Linux 6.1" if (major, minor) < (6, 1) else None
