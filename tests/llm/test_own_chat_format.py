"""The chat format derived from each family's chat template (export/chat_format.py) renders conversations to the
template's own tokens, refuses the roles the template refuses, and is not derived from a template that is not one
text per role."""
from __future__ import annotations

import importlib.util

import pytest

from tests.conftest import missing
from tests.llm import own_models

if importlib.util.find_spec("transformers") is None:
    missing("needs: pip install 'tritonkit[llm]'")

CONVERSATIONS = [
    [{"role": "user", "content": "Hi"}],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": " spaced  "}],
    [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b\n"}, {"role": "user", "content": "c"}],
]
#: Mistral's newer template: the system prompt goes into the last user message, so no text a role renders it.
FOLDED_SYSTEM = ("{{ bos_token }}{% set system = messages[0]['content'] if messages[0]['role'] == 'system' else '' %}"
                 "{% for m in messages if m['role'] != 'system' %}{% if m['role'] == 'user' %}[INST] "
                 "{% if loop.last and system %}{{ system }}\n\n{% endif %}{{ m['content'] }}[/INST]"
                 "{% else %}{{ m['content'] }}{{ eos_token }}{% endif %}{% endfor %}")


@pytest.mark.parametrize("family", sorted(own_models.FAMILIES))
def test_the_derived_format_encodes_like_the_template(family: str) -> None:
    import jinja2

    from tritonkit.pipelines.llm.export.chat_format import derive
    from tritonkit.pipelines.llm.runtime.chat import format_chat

    tokenizer = own_models.tokenizer(own_models.FAMILIES[family])
    chat = derive(tokenizer)
    assert chat is not None
    for messages in CONVERSATIONS:
        try:
            want = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                                 return_dict=False)
        except jinja2.TemplateError:
            with pytest.raises(ValueError, match="no 'system' role"):
                format_chat(chat, messages)
            continue
        assert tokenizer(format_chat(chat, messages)).input_ids == list(want), (family, messages)


def test_a_template_that_folds_the_system_prompt_into_a_user_message_gives_no_format() -> None:
    from tritonkit.pipelines.llm.export.chat_format import derive

    family = own_models.FAMILIES["mistral"]
    tokenizer = own_models.tokenizer(own_models.Family(family.config, family.special, family.bos, family.eos,
                                                       FOLDED_SYSTEM))
    assert tokenizer.apply_chat_template(CONVERSATIONS[1], tokenize=False).startswith("<s>[INST] Be brief.\n\n")
    assert derive(tokenizer) is None
