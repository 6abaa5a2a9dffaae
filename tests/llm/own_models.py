"""Small random-weight checkpoints of each family the pipeline serves from a user's folder, made offline: a config
with tiny sizes, `save_pretrained`, and a byte-level tokenizer with the family's special tokens and a chat template
in its style saved beside it."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SIZES = {"hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
         "num_key_value_heads": 2, "max_position_embeddings": 128, "pad_token_id": 0,
         "initializer_range": 0.2}   # wide weights: varied greedy tokens

LLAMA3 = ("{{ bos_token }}{% for m in messages %}<|start_header_id|>{{ m['role'] }}<|end_header_id|>\n\n"
          "{{ m['content'] }}<|eot_id|>{% endfor %}"
          "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}")
CHATML = ("{% if messages[0]['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
          "{% endif %}{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
MISTRAL = ("{{ bos_token }}{% for m in messages %}{% if m['role'] == 'user' %}[INST] {{ m['content'] }}[/INST]"
           "{% elif m['role'] == 'assistant' %}{{ m['content'] }}{{ eos_token }}"
           "{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}")
PHI3 = ("{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>\n{% else %}{{ eos_token }}{% endif %}")
GEMMA = ("{{ bos_token }}{% for m in messages %}{% if m['role'] == 'system' %}"
         "{{ raise_exception('System role not supported') }}{% endif %}"
         "{% set role = 'model' if m['role'] == 'assistant' else m['role'] %}"
         "<start_of_turn>{{ role }}\n{{ m['content'] | trim }}<end_of_turn>\n{% endfor %}"
         "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}")


@dataclass(frozen=True)
class Family:
    """One family's tiny checkpoint: its config class and switches, its tokens and chat template."""

    config: str   # transformers config class
    special: list[str]
    bos: str | None
    eos: str
    template: str
    settings: dict[str, Any] = field(default_factory=dict)


FAMILIES = {
    "llama": Family("LlamaConfig", ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                                    "<|end_header_id|>", "<|eot_id|>"], "<|begin_of_text|>", "<|eot_id|>", LLAMA3,
                    {"tie_word_embeddings": False}),
    "qwen2": Family("Qwen2Config", ["<|endoftext|>", "<|im_start|>", "<|im_end|>"], None, "<|im_end|>", CHATML,
                    {"tie_word_embeddings": True}),
    "mistral": Family("MistralConfig", ["<s>", "</s>", "[INST]", "[/INST]"], "<s>", "</s>", MISTRAL,
                      {"sliding_window": 64}),
    "phi3": Family("Phi3Config", ["<|endoftext|>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"], None,
                   "<|endoftext|>", PHI3),
    "gemma": Family("GemmaConfig", ["<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>"], "<bos>", "<eos>", GEMMA,
                    {"head_dim": 32, "hidden_activation": "gelu_pytorch_tanh"}),
}


def tokenizer(family: Family) -> Any:
    """A byte-level BPE (a token a byte) with the family's special tokens, adding its BOS token as it encodes."""
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast

    from tritonkit.pipelines.llm.export.tiny import make_tokenizer

    backend = make_tokenizer()
    backend.add_special_tokens(family.special)
    if family.bos is not None:
        bos = backend.token_to_id(family.bos)
        backend.post_processor = processors.TemplateProcessing(single=f"{family.bos} $A", pair=f"{family.bos} $A $B",
                                                               special_tokens=[(family.bos, bos)])
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token=family.bos, eos_token=family.eos,
                                   pad_token=family.eos, chat_template=family.template)


def save(name: str, folder: Path, seed: int = 0) -> Path:
    """The family's checkpoint in `folder` (config.json, model.safetensors, tokenizer files, chat template)."""
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    family = FAMILIES[name]
    tok = tokenizer(family)
    config = getattr(transformers, family.config)(vocab_size=len(tok), bos_token_id=tok.bos_token_id,
                                                  eos_token_id=tok.eos_token_id, **SIZES, **family.settings)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    with torch.no_grad():   # random norms, so Gemma's 1 + weight is not 1 + 0
        for module in model.modules():
            if "RMSNorm" in type(module).__name__:
                module.weight.normal_(0.0 if name == "gemma" else 1.0, 0.2)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder
