"""The files an LLM pipeline model reads from its own version folder: model.onnx (generate only), tokenizer.json,
generation.json (written by `prepare`; the build copies the small ones into each model that needs them).

Each model reads only its own folder: Triton reading an `s3://` repository downloads every model into a folder
of its own, so a sibling's folder is not there.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GENERATION_FILE, TOKENIZER_FILE, MODEL_FILE = "generation.json", "tokenizer.json", "model.onnx"


@dataclass(frozen=True)
class GenerationConfig:
    """generation.json: stop tokens, context length, chat format."""

    name: str
    eos_token_ids: tuple[int, ...]
    max_context: int
    chat: dict[str, Any] | None
    bos_token_id: int | None = None

    @classmethod
    def load(cls, folder: str | Path) -> GenerationConfig:
        data = json.loads((Path(folder) / GENERATION_FILE).read_text())
        return cls(name=str(data.get("name", "")), eos_token_ids=tuple(int(i) for i in data.get("eos_token_ids", [])),
                   max_context=int(data["max_context"]), chat=data.get("chat"), bos_token_id=data.get("bos_token_id"))


def model_parameters(model_config: dict[str, Any]) -> dict[str, str]:
    """A Triton model config's `parameters` (JSON form) as plain strings."""
    return {k: v.get("string_value", "") for k, v in model_config.get("parameters", {}).items()}


def int_parameter(params: dict[str, str], name: str, default: int) -> int:
    value = params.get(name, "")
    return int(float(value)) if value.strip() else default


def float_parameter(params: dict[str, str], name: str, default: float) -> float:
    value = params.get(name, "")
    return float(value) if value.strip() else default


def bool_parameter(params: dict[str, str], name: str, default: bool) -> bool:
    """0 or false is off, anything else on; absent or empty: `default`."""
    value = params.get(name, "").strip().lower()
    return value not in ("0", "false") if value else default


def model_context(initialize_args: dict[str, str],
                  needs: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, str], Path]:
    """From a Python model's `initialize` args: its config, its string parameters and its own version folder,
    which must hold the files `needs` names."""
    config = json.loads(initialize_args["model_config"])
    folder = Path(initialize_args["model_repository"]) / str(initialize_args["model_version"])
    missing = [name for name in needs if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(f"{folder} has no {', '.join(missing)}: the spec copies them into this model "
                                f"(files: {{{missing[0]}: model:generate/{missing[0]}}}); "
                                "`python -m tritonkit.pipelines.llm.export.prepare` writes them")
    return config, model_parameters(config), folder
