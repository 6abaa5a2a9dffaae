"""A user's own Hugging Face checkpoint served: for a tiny random-weight checkpoint of each family (Llama, Qwen2,
Mistral, Phi-3, Gemma: tests/llm/own_models.py), `tritonkit init --pipeline llm --model PATH`, `tritonkit build`,
the embedded Triton and the gateway; greedy tokens equal transformers' `generate`, and an OpenAI client's chat is
the prompt `apply_chat_template` makes (its token count, and the answer transformers gives that prompt). Any other
architecture is refused in one line."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from tests.conftest import run_cli
from tests.gateway.conftest import gateway, served
from tests.llm import clients, own_models

pytestmark = pytest.mark.server
KEY = "test-key-not-a-secret"
TOKENS = 16
PROMPT = "The capital of France is"
CHAT = [{"role": "user", "content": "Hello there"}, {"role": "assistant", "content": "Hi!"},
        {"role": "user", "content": "What is Triton?"}]


@pytest.fixture(scope="module", params=sorted(own_models.FAMILIES))
def stack(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One family's checkpoint, made into a project by `init --model`, built, served with its gateway."""
    folder = tmp_path_factory.mktemp(f"own-{request.param}")
    checkpoint = own_models.save(request.param, folder / "checkpoint")
    project = folder / "project"
    init = run_cli("init", str(project), "--pipeline", "llm", "--model", str(checkpoint))
    assert init.returncode == 0, init.stderr
    built = run_cli("build", cwd=project, timeout=600)
    assert built.returncode == 0, built.stderr
    with served(project) as server, gateway(project, server, env={"TRITONKIT_API_KEY": KEY}) as base:
        yield {"family": request.param, "checkpoint": checkpoint, "server": server, "base": base,
               "assets": server.repository / "generate" / "1"}


@pytest.fixture(scope="module")
def reference(stack: dict[str, Any]) -> tuple[Any, Any]:
    """transformers' own model and tokenizer of the checkpoint."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    checkpoint = stack["checkpoint"]
    return AutoModelForCausalLM.from_pretrained(checkpoint).eval(), AutoTokenizer.from_pretrained(checkpoint)


def _generate(model: Any, ids: list[int], eos: list[int] | None) -> list[int]:
    """transformers' greedy continuation of `ids` (TOKENS, fewer where an end token in `eos` comes first)."""
    import torch
    from transformers import GenerationConfig

    config = GenerationConfig(max_new_tokens=TOKENS, do_sample=False, eos_token_id=eos, pad_token_id=0)
    with torch.no_grad():
        out = model.generate(torch.tensor([ids]), generation_config=config)
    return [int(t) for t in out[0, len(ids):]]


def test_greedy_tokens_equal_transformers(stack: dict[str, Any], reference: tuple[Any, Any]) -> None:
    model, tokenizer = reference
    ids = tokenizer(PROMPT).input_ids
    want = _generate(model, ids, None)
    assert len(want) == TOKENS
    body = {"input_ids": ids, "max_tokens": TOKENS, "ignore_eos": True, "temperature": 0.0}
    served_ = clients.http(stack["server"].http_url, "generate", body, stream=True, ids="token_ids")
    assert served_.error == ""
    assert served_.ids == want


def test_a_chat_is_the_prompt_of_the_models_chat_template(stack: dict[str, Any], reference: tuple[Any, Any]) -> None:
    from tritonkit.pipelines.llm.runtime.text import TextCodec

    model, tokenizer = reference
    prompt = tokenizer.apply_chat_template(CHAT, add_generation_prompt=True, tokenize=True, return_dict=False)
    eos = json.loads((stack["assets"] / "generation.json").read_text())["eos_token_ids"]
    answer = _generate(model, list(prompt), eos)
    ended = bool(answer) and answer[-1] in eos
    client = openai.OpenAI(base_url=stack["base"], api_key=KEY, max_retries=0)
    reply = client.chat.completions.create(model="llm", messages=CHAT, max_tokens=TOKENS, temperature=0.0)
    assert reply.usage is not None and reply.usage.prompt_tokens == len(prompt)
    codec = TextCodec(stack["assets"] / "tokenizer.json")
    assert reply.choices[0].message.content == codec.decode(answer[:-1] if ended else answer)
    assert reply.choices[0].finish_reason == ("stop" if ended else "length")


def test_a_system_message_is_rendered_as_the_template_does_or_refused_as_it_does(stack: dict[str, Any],
                                                                               reference: tuple[Any, Any]) -> None:
    import jinja2

    _, tokenizer = reference
    chat = [{"role": "system", "content": "Be brief."}, *CHAT]
    client = openai.OpenAI(base_url=stack["base"], api_key=KEY, max_retries=0)
    try:
        prompt = tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=True, return_dict=False)
    except jinja2.TemplateError:   # Gemma's and this Mistral template's raise_exception
        with pytest.raises(openai.BadRequestError, match="no 'system' role"):
            client.chat.completions.create(model="llm", messages=chat, max_tokens=1)
        return
    reply = client.chat.completions.create(model="llm", messages=chat, max_tokens=1)
    assert reply.usage is not None and reply.usage.prompt_tokens == len(prompt)


def test_the_context_stops_at_a_sliding_window(stack: dict[str, Any], reference: tuple[Any, Any]) -> None:
    """Mistral's window (64 here): within it sliding and full attention are one computation, past it they differ,
    so the served context ends there and a longer request is refused."""
    if stack["family"] != "mistral":
        pytest.skip("only the Mistral checkpoint has a sliding window")
    generation = json.loads((stack["assets"] / "generation.json").read_text())
    assert generation["max_context"] == own_models.FAMILIES["mistral"].settings["sliding_window"]
    client = openai.OpenAI(base_url=stack["base"], api_key=KEY, max_retries=0)
    with pytest.raises(openai.BadRequestError, match="context"):
        client.completions.create(model="llm", prompt="x" * 56, max_tokens=TOKENS)


def test_another_architecture_is_refused_in_one_line(tmp_path: Path) -> None:
    from transformers import GPT2Config, GPT2LMHeadModel

    GPT2LMHeadModel(GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=64, n_positions=32)).save_pretrained(
        tmp_path / "gpt2")
    result = run_cli("init", str(tmp_path / "project"), "--pipeline", "llm", "--model", str(tmp_path / "gpt2"))
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert "GPT2LMHeadModel" in lines[0] and "gpt2" in lines[0] and "LlamaForCausalLM" in lines[0], lines[0]
    assert not (tmp_path / "project" / "tritonkit.yaml").exists()


@pytest.mark.slow   # SmolLM2's GGUF tokenizer and config are read at init (~1 min)
def test_a_gguf_file_becomes_a_project_with_its_chat_format(tmp_path: Path) -> None:
    """The SmolLM2 example's GGUF file through `init --model`: linked into the project, named by the spec, its
    assets the example's (ChatML with the default system prompt, <|im_end|> among the end tokens)."""
    import yaml
    from tokenizers import Tokenizer

    from tritonkit.pipelines.llm.export import smollm2

    try:
        gguf = smollm2.gguf_path()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    result = run_cli("init", str(tmp_path), "--pipeline", "llm", "--model", str(gguf))
    assert result.returncode == 0, result.stderr
    source = yaml.safe_load((tmp_path / "tritonkit.yaml").read_text())["models"]["generate"]["source"]
    assert source["kwargs"] == {"model": f"model/{gguf.name}"} and source["weights"] == [f"model/{gguf.name}"]
    assert (tmp_path / "model" / gguf.name).stat().st_size == gguf.stat().st_size
    generation = json.loads((tmp_path / "assets" / "generation.json").read_text())
    assert generation["chat"]["message"] == "<|im_start|>{role}\n{content}<|im_end|>\n"
    assert generation["chat"]["default_system"].startswith("You are a helpful AI assistant named SmolLM")
    tokenizer = Tokenizer.from_file(str(tmp_path / "assets" / "tokenizer.json"))
    assert tokenizer.token_to_id("<|im_end|>") in generation["eos_token_ids"]


def test_a_starter_without_a_model_of_its_own_refuses_model(tmp_path: Path) -> None:
    result = run_cli("init", str(tmp_path / "p"), "--pipeline", "classifier", "--model", str(tmp_path))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "--model" in result.stderr and "--pipeline llm" in result.stderr, result.stderr
    assert not (tmp_path / "p" / "tritonkit.yaml").exists()
