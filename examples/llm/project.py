"""A copy of an example LLM project in another folder (tests, benchmarks), with generate's settings overridden.

Writes `folder/tritonkit.yaml` = the recipe's spec (`tiny`: the starter `tritonkit init --pipeline llm` writes,
with examples/llm/tiny/assets; `smollm2`: examples/llm/smollm2/tritonkit.yaml) with the files it names (assets)
copied into `folder` (a spec may only name files inside its project). `generate` is defined there (the engine
holding the weights); the rest comes from the shipped `tritonkit:ensembles/llm.yaml`.
`tritonkit build` of it exports the decoder into `folder/.tritonkit/` (cached there).
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

from tritonkit.package_files import PACKAGE_PREFIX, package_path

EXAMPLES = Path(__file__).resolve().parent
#: Each recipe's spec and the folder its `assets/` come from.
RECIPES = {"tiny": (package_path("pipelines/llm/starter/tritonkit.yaml"), EXAMPLES / "tiny"),
           "smollm2": (EXAMPLES / "smollm2" / "tritonkit.yaml", EXAMPLES / "smollm2")}


def write_project(folder: Path, recipe: str, assets_dir: Path | None = None,
                  generate_parameters: dict[str, Any] | None = None,
                  generate_overrides: dict[str, Any] | None = None) -> Path:
    """Returns the spec path. `assets_dir` replaces the recipe's assets/ folder (tokenizer.json, generation.json);
    `generate_parameters` merge into generate's parameters; `generate_overrides` replace top-level fields of
    generate (e.g. max_batch_size, sequence_batching)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    spec_file, example = RECIPES[recipe]
    spec = yaml.safe_load(spec_file.read_text())
    generate = spec["models"]["generate"]
    generate["parameters"].update(generate_parameters or {})
    generate.update(generate_overrides or {})
    for path in generate["files"].values():
        if path.startswith(PACKAGE_PREFIX):
            continue
        origin = Path(assets_dir) / path[len("assets/"):] if assets_dir is not None else example / path
        dest = folder / path
        if dest.exists() and dest.samefile(origin):  # assets prepared in place already
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(origin, dest)
    (folder / "tritonkit.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return folder / "tritonkit.yaml"
