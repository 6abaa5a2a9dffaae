"""A user's own causal LM, a Hugging Face folder (config.json, safetensors, tokenizer) or a GGUF file, as the LLM
pipeline's decoder and assets.

Entry point for the exporter: `tritonkit.pipelines.llm.export.hf:build` with `kwargs: {model: PATH}`. The
families served are those `llama.py` wraps; any other architecture is refused by name before torch is imported.
Nothing is downloaded (HF_HUB_OFFLINE is set).
"""
import functools
import json
import os
import sys
from pathlib import Path
from typing import Any

from tritonkit.pipelines.llm.export import chat_format, kv_graph, llama

#: config.json `architectures` -> what it is (the families llama.py wraps).
SUPPORTED = {"LlamaForCausalLM": "Llama, SmolLM, TinyLlama", "MistralForCausalLM": "Mistral",
             "Qwen2ForCausalLM": "Qwen2", "Phi3ForCausalLM": "Phi-3", "GemmaForCausalLM": "Gemma"}
#: a GGUF file's `general.architecture` -> the architecture transformers loads it as (Gemma has no GGUF loader).
GGUF_ARCHITECTURES = {"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM", "qwen2": "Qwen2ForCausalLM",
                      "phi3": "Phi3ForCausalLM"}


class UnsupportedModel(ValueError):
    """The model at a path is no family the pipeline serves, or no model at all (one line, with the fix)."""


def architecture(path: Path) -> str:
    """The supported architecture of the model at `path` (a folder with config.json, or a .gguf file)."""
    path = Path(path)
    if path.is_file() and path.suffix == ".gguf":
        return _gguf_architecture(path)
    config_file = path / "config.json"
    if not config_file.is_file():
        raise UnsupportedModel(f"{path}: no config.json; give a Hugging Face model folder or a .gguf file")
    config = json.loads(config_file.read_text())
    names = [str(n) for n in config.get("architectures") or []]
    found = next((n for n in names if n in SUPPORTED), None)
    if found is None:
        shown = ", ".join(names) or "none"
        raise UnsupportedModel(f"{config_file}: architecture {shown} (model_type {config.get('model_type')}) is not "
                               f"supported; supported: {', '.join(sorted(SUPPORTED))}")
    return found


def _gguf_architecture(path: Path) -> str:
    import gguf

    field = gguf.GGUFReader(str(path)).fields.get("general.architecture")
    name = bytes(field.parts[field.data[0]]).decode() if field is not None else "unknown"
    if name not in GGUF_ARCHITECTURES:
        raise UnsupportedModel(f"{path}: GGUF architecture {name} is not supported; supported: "
                               f"{', '.join(sorted(GGUF_ARCHITECTURES))}")
    return GGUF_ARCHITECTURES[name]


def _source(path: Path) -> tuple[str, dict[str, str]]:
    """from_pretrained's folder and keyword arguments for a folder or a GGUF file (offline)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    path = Path(path).resolve()
    if path.suffix != ".gguf":
        return str(path), {}
    import gguf

    # transformers asks gguf for a tensor-name table once per tensor, and gguf rebuilds it each time
    # (about 17 s of SmolLM2's 28 s load); the table depends only on (architecture, block count).
    if not hasattr(gguf.get_tensor_name_map, "cache_info"):
        gguf.get_tensor_name_map = functools.lru_cache(maxsize=None)(gguf.get_tensor_name_map)
    return str(path.parent), {"gguf_file": path.name}


def load_model(path: Path) -> Any:
    """The model in float32, eval mode (refused by name first when no supported family)."""
    architecture(path)
    import torch
    from transformers import AutoModelForCausalLM

    folder, kwargs = _source(path)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, **kwargs)
    llama.check(model.config)
    return model.eval()


def load_tokenizer(path: Path) -> Any:
    """The model's fast tokenizer, with its chat template."""
    from transformers import AutoTokenizer

    folder, kwargs = _source(path)
    return AutoTokenizer.from_pretrained(folder, **kwargs)


def max_context(config: Any) -> int:
    """Positions a sequence may hold: the model's, and no more than its sliding window (Mistral, Phi-3), within
    which sliding and full attention are the same computation."""
    types = getattr(config, "layer_types", None)
    window = getattr(config, "sliding_window", None)
    if types is not None and "sliding_attention" not in types:
        window = None
    return min(int(config.max_position_embeddings), int(window or config.max_position_embeddings))


def build(model: str, code: str = "") -> tuple[Any, dict[str, Any]]:
    """Entry point for the exporter: (decoder module, example inputs). `code` only keys the export cache."""
    hf = load_model(Path(model))
    g = llama.geometry(hf)
    return llama.make_decoder(hf), kv_graph.example_inputs(g["vocab"], g["layers"], g["kv_heads"], g["head_dim"])


def end_tokens(tokenizer: Any, path: Path, chat: dict[str, Any] | None) -> list[int]:
    """The ids that end a reply: the tokenizer's EOS, generation_config.json's, and the token closing an assistant
    message in the chat format (ChatML's <|im_end|>, Gemma's <end_of_turn>, Phi-3's <|end|>)."""
    ids = {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set()
    generation_file = Path(path) / "generation_config.json"
    if generation_file.is_file():
        eos = json.loads(generation_file.read_text()).get("eos_token_id")
        ids |= set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
    if chat is not None:
        template = chat["messages"]["assistant"] if "messages" in chat else chat["message"]
        closing = template.partition("{content}")[2].strip()
        if closing in tokenizer.get_added_vocab():
            ids.add(tokenizer.get_added_vocab()[closing])
    return sorted(int(i) for i in ids)


def write_assets(model: Path, out_dir: Path) -> None:
    """tokenizer.json and generation.json (end tokens, context, chat format) for the runtime."""
    from transformers import AutoConfig

    out_dir.mkdir(parents=True, exist_ok=True)
    model = Path(model)
    tokenizer = load_tokenizer(model)
    folder, kwargs = _source(model)
    config = AutoConfig.from_pretrained(folder, **kwargs)
    tokenizer.backend_tokenizer.save(str(out_dir / "tokenizer.json"))
    chat = chat_format.derive(tokenizer)
    generation = {"format": 1, "name": model.stem if model.is_file() else model.resolve().name,
                  "eos_token_ids": end_tokens(tokenizer, model if model.is_dir() else model.parent, chat),
                  "bos_token_id": None, "max_context": max_context(config), "chat": chat}
    (out_dir / "generation.json").write_text(json.dumps(generation, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    """`python -m tritonkit.pipelines.llm.export.hf MODEL OUT`: the assets of MODEL in OUT."""
    import argparse

    parser = argparse.ArgumentParser(description="tokenizer.json and generation.json of a Hugging Face folder or "
                                                 "GGUF file, for the LLM pipeline")
    parser.add_argument("model", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    try:
        write_assets(args.model, args.out)
    except UnsupportedModel as exc:
        print(exc, file=sys.stderr)
        return 2
    print(f"{args.out / 'tokenizer.json'}, {args.out / 'generation.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
