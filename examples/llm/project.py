"""A copy of an example LLM project in another folder (tests, benchmarks), with pipeline settings overridden.

Writes `folder/tritonkit.yaml` = examples/llm/<recipe>/tritonkit.yaml with the files it names (assets) copied
into `folder` (a spec may only name files inside its project), including `folder/llm.yaml` =
ensembles/llm.yaml with overrides (KV budget, batching).
`tritonkit build` of it exports the decoder into `folder/.tritonkit/` (cached there).
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

from tritonkit.package_files import PACKAGE_PREFIX, package_path

EXAMPLES = Path(__file__).resolve().parent


def write_project(folder: Path, recipe: str, assets_dir: Path | None = None, generate_parameters: dict[str, Any] | None = None,
                  generate_overrides: dict[str, Any] | None = None, ensemble_overrides: dict[str, Any] | None = None) -> Path:
    """Returns the spec path. `assets_dir` replaces the example's assets/ folder (tokenizer.json, generation.json);
    `generate_parameters` merge into generate's parameters; `generate_overrides`/`ensemble_overrides` replace
    top-level fields of generate and of both ensembles (e.g. max_batch_size, sequence_batching)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    pipeline = yaml.safe_load(package_path("ensembles/llm.yaml").read_text())
    models = pipeline["models"]
    models["generate"]["parameters"].update(generate_parameters or {})
    models["generate"].update(generate_overrides or {})
    for name in ("llm", "llm_complete"):
        models[name].update(ensemble_overrides or {})
    (folder / "llm.yaml").write_text(yaml.safe_dump(pipeline, sort_keys=False))
    example = EXAMPLES / recipe
    spec = yaml.safe_load((example / "tritonkit.yaml").read_text())
    spec["include"] = ["llm.yaml"]
    for model in spec["models"].values():
        for path in model.get("files", {}).values():
            if path.startswith(PACKAGE_PREFIX):
                continue
            if assets_dir is not None and path.startswith("assets/"):
                origin = Path(assets_dir) / path[len("assets/"):]
            else:
                origin = example / path
            dest = folder / path
            if dest.exists() and dest.samefile(origin):  # assets prepared in place already
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, dest)
    (folder / "tritonkit.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return folder / "tritonkit.yaml"
