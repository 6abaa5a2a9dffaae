"""The decoder folder a pipeline reads: model.onnx, tokenizer.json, generation.json (written by `prepare`).

Inside Triton the folder is the `decoder` model's version folder; the other models find it as a sibling of
their own model folder (parameter `decoder_model`), so the weights are stored and shipped once.
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


def sibling_version_dir(model_dir: str | Path, sibling: str, version: str | int | None = None) -> Path:
    """`<repository>/<sibling>/<version>`: the given version, else the highest numbered one."""
    root = Path(model_dir).parent / sibling
    if version not in (None, "", -1, "-1"):
        folder = root / str(version)
    else:
        versions = sorted((int(p.name) for p in root.iterdir() if p.name.isdigit() and p.is_dir()), reverse=True) \
            if root.is_dir() else []
        folder = root / str(versions[0]) if versions else root / "1"
    if not (folder / GENERATION_FILE).is_file():
        raise FileNotFoundError(f"{folder} has no {GENERATION_FILE}: the '{sibling}' model must sit next to this one "
                                f"in the same repository, with the files written by "
                                f"`python -m tritonkit.pipelines.llm.export.prepare`")
    return folder


def model_parameters(model_config: dict[str, Any]) -> dict[str, str]:
    """A Triton model config's `parameters` (JSON form) as plain strings."""
    return {k: v.get("string_value", "") for k, v in model_config.get("parameters", {}).items()}


#: Triton's max_sequence_idle_microseconds when a config leaves it out (or sets 0).
DEFAULT_SEQUENCE_IDLE_US = 1_000_000


def sequence_idle_s(model_config: dict[str, Any]) -> float:
    """The config's sequence idle limit in seconds: Triton drops a sequence with no request for that long."""
    value = int(model_config.get("sequence_batching", {}).get("max_sequence_idle_microseconds", 0) or 0)
    return (value or DEFAULT_SEQUENCE_IDLE_US) / 1e6


def int_parameter(params: dict[str, str], name: str, default: int) -> int:
    value = params.get(name, "")
    return int(float(value)) if value.strip() else default


def float_parameter(params: dict[str, str], name: str, default: float) -> float:
    value = params.get(name, "")
    return float(value) if value.strip() else default


def decoder_context(initialize_args: dict[str, str]) -> tuple[dict[str, Any], dict[str, str], Path]:
    """From a Python model's `initialize` args: its config, its string parameters and the decoder's version
    folder (tokenizer, generation settings, model.onnx), which every LLM pipeline model reads."""
    config = json.loads(initialize_args["model_config"])
    params = model_parameters(config)
    folder = sibling_version_dir(initialize_args["model_repository"], params.get("decoder_model", "decoder"),
                                 params.get("decoder_version"))
    return config, params, folder
