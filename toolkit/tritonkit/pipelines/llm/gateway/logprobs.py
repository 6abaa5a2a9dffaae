"""Log probabilities in OpenAI's two shapes: chat's `logprobs.content` (a token's text, its logprob, its bytes and
its top alternatives) and completions' legacy `logprobs` (tokens, token_logprobs, top_logprobs as {token: logprob},
text_offset). A token's text is its bytes decoded, so a token holding part of a UTF-8 character shows U+FFFD; its
`bytes` are exact. An end token that ended the answer comes last, its text and bytes empty (as vLLM shows a special
token it skips)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tritonkit.pipelines.llm.gateway.model import END_TOKEN, TokenLogprob

TokenBytes = Callable[[int], bytes]


def _bytes(token: int, token_bytes: TokenBytes) -> bytes:
    """A token's bytes; none for an end token (its text is not part of the answer)."""
    return b"" if token == END_TOKEN else token_bytes(token)


def _entry(token: int, logprob: float, token_bytes: TokenBytes) -> dict[str, Any]:
    raw = _bytes(token, token_bytes)
    return {"token": raw.decode("utf-8", errors="replace"), "logprob": logprob, "bytes": list(raw)}


def chat_logprobs(tokens: Sequence[TokenLogprob], token_bytes: TokenBytes) -> dict[str, Any]:
    """chat.completion's choice.logprobs for these tokens."""
    content = [_entry(t.token, t.logprob, token_bytes)
               | {"top_logprobs": [_entry(i, lp, token_bytes) for i, lp in t.top]} for t in tokens]
    return {"content": content, "refusal": None}


def completion_logprobs(tokens: Sequence[TokenLogprob | None], token_ids: Sequence[int], token_bytes: TokenBytes,
                        offset: int = 0) -> dict[str, Any]:
    """text_completion's choice.logprobs for `token_ids` (a None entry: no log probability, as for an echoed prompt's
    first token), `offset` the characters of text before them."""
    texts = [_bytes(i, token_bytes).decode("utf-8", errors="replace") for i in token_ids]
    offsets = []
    for text in texts:
        offsets.append(offset)
        offset += len(text)
    return {"tokens": texts, "token_logprobs": [t.logprob if t is not None else None for t in tokens],
            "top_logprobs": [{token_bytes(i).decode("utf-8", errors="replace"): lp for i, lp in t.top}
                             if t is not None else None for t in tokens],
            "text_offset": offsets}
