"""The chat task set a quantized LM is scored on by its answers (`chat_quality`), and how an answer is scored.

`chat_tasks.jsonl` (shipped beside this module) holds one task a line: `{"category", "messages", "accept"}`, the
messages a chat with a system prompt that a small instruct model can sometimes answer (short facts, small
arithmetic, instructions with a checkable answer, recall of a fact stated earlier in the chat), `accept` the
answers counted right.

A reply is right when one accepted answer, normalized, appears as whole words in the reply's first sentence,
normalized the same way. Normalizing lowercases, drops apostrophes ("I'd" -> "id", "'d'" -> "d"), turns every other
character that is not a letter or digit into a space and collapses spaces; an accepted answer also loses a leading
article ("the Pacific" -> "pacific"). The first sentence ends at the first line break, or at the first ".", "!" or
"?" followed by a space or the end ("3.5" does not end it). So "The capital of France is Paris." is right for
Paris, "Paris is lovely. Or Lyon." right for Paris and wrong for Lyon, and "Parisian food" wrong for Paris.
"""
import json
import re
from dataclasses import dataclass
from pathlib import Path

TASKS = Path(__file__).with_name("chat_tasks.jsonl")
CATEGORIES = ("fact", "arithmetic", "instruction", "recall")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
_ARTICLE = re.compile(r"^(the|a|an) ")


@dataclass(frozen=True)
class ChatTask:
    """One chat (role/content messages, the last a user's) and the answers that count as right."""

    category: str
    messages: list[dict[str, str]]
    accept: list[str]


def load_tasks(path: Path = TASKS) -> list[ChatTask]:
    """The task set, in file order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [ChatTask(**json.loads(line)) for line in lines if line.strip()]


def normalize(text: str) -> str:
    """Lowercase words and digits separated by single spaces (see the module's docstring)."""
    text = text.lower().replace("'", "").replace("\u2019", "")
    return " ".join(re.sub(r"[\W_]+", " ", text).split())


def first_sentence(reply: str) -> str:
    """The reply up to its first sentence end (leading space and line breaks skipped)."""
    reply = reply.strip()
    end = _SENTENCE_END.search(reply)
    return reply if end is None else reply[:end.start()]


def answered(reply: str) -> bool:
    """Whether the reply's first sentence is complete: text follows its end, so more tokens cannot change it."""
    reply = reply.strip()
    end = _SENTENCE_END.search(reply)
    return end is not None and end.end() < len(reply)


def is_right(reply: str, accept: list[str]) -> bool:
    """Whether an accepted answer appears as whole words in the reply's first sentence."""
    said = f" {normalize(first_sentence(reply))} "
    return any(f" {_ARTICLE.sub('', normalize(answer))} " in said for answer in accept)
