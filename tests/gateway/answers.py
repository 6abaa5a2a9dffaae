"""Asking a served LLM through the gateway as an application does (the official openai client): one chat at a
time, or several at once, so tests can compare an answer alone with the same answer beside others."""
from __future__ import annotations

import asyncio
from typing import Any

import openai

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
#: Ten short chats of different kinds (facts, arithmetic, an instruction, a rewrite), each with the system prompt.
CHATS = [[SYSTEM, {"role": "user", "content": question}] for question in (
    "What is the capital of France?", "Name the three primary colours.", "What is 7 times 8?",
    "Who wrote Romeo and Juliet?", "Spell the word cat backwards.", "What do bees make?",
    "How many legs does a spider have?", "Give me a word that means happy.", "What is the largest planet?",
    "Rewrite this sentence in the past tense: I walk to school.")]


def ask(client: openai.OpenAI, model: str, messages: list[dict[str, str]], **params: Any) -> str:
    """One chat's answer, whole."""
    reply = client.chat.completions.create(model=model, messages=messages, **params)
    return reply.choices[0].message.content or ""


def ask_at_once(base_url: str, api_key: str, model: str, chats: list[list[dict[str, str]]],
                params: list[dict[str, Any]]) -> list[str]:
    """The chats sent together (each with its own parameters), their answers in order: the server runs them in one
    in-flight batch."""
    async def run() -> list[str]:
        async with openai.AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=300) as client:
            replies = await asyncio.gather(*(client.chat.completions.create(model=model, messages=m, **p)
                                             for m, p in zip(chats, params)))
        return [r.choices[0].message.content or "" for r in replies]

    return asyncio.run(run())


def check_greedy_answers_depend_on_the_chat_alone(client: openai.OpenAI, base_url: str, api_key: str, model: str,
                                                  max_tokens: int) -> None:
    """Ten chats asked one at a time, then again (their starts now in the prefix cache), then eight different ones
    at once: temperature 0 gives the same answers every time."""
    greedy = {"max_tokens": max_tokens, "temperature": 0}
    first = [ask(client, model, chat, **greedy) for chat in CHATS]
    assert [ask(client, model, chat, **greedy) for chat in CHATS] == first
    together = ask_at_once(base_url, api_key, model, CHATS[:8], [greedy] * 8)
    assert together == first[:8], [i for i, (a, b) in enumerate(zip(together, first)) if a != b]


def check_seeded_answers_repeat(client: openai.OpenAI, base_url: str, api_key: str, model: str,
                                max_tokens: int, seeds_differ: bool = True) -> None:
    """A sampled answer with a seed is the same asked again, and sent among seven other chats, first or last of
    them; with `seeds_differ`, other seeds give other answers (a model whose next token is all but certain, as the
    random-weight starter's, answers alike whatever the seed)."""
    seeded = {"max_tokens": max_tokens, "temperature": 0.9, "seed": 1234}
    chat = CHATS[1]
    alone = ask(client, model, chat, **seeded)
    assert ask(client, model, chat, **seeded) == alone
    others = [{"max_tokens": max_tokens, "temperature": 0.9, "seed": 7 + i} for i in range(7)]
    first = ask_at_once(base_url, api_key, model, [chat, *CHATS[2:9]], [seeded, *others])
    last = ask_at_once(base_url, api_key, model, [*CHATS[2:9], chat], [*others, seeded])
    assert first[0] == alone and last[-1] == alone
    if seeds_differ:
        assert {ask(client, model, chat, **{**seeded, "seed": s}) for s in (1, 2, 3)} != {alone}
