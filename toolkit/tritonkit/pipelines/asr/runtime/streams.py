"""Per-stream state of the streaming ASR models, keyed by correlation id.

Triton 2.51's Python backend does not carry `sequence_batching` implicit state, so each streaming model keeps
its own (feature extractor, acoustic context, decoder) in a table: created on START, found on later chunks,
freed on END or after `idle_timeout_s` without a chunk. `max_streams` bounds memory: a new stream beyond it
is refused with a message that says why, instead of slowing every live stream down.
"""
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

State = TypeVar("State")


class StreamLimitError(Exception):
    """A new stream arrived while `max_streams` streams are live."""


class UnknownStreamError(Exception):
    """A chunk arrived for a stream that was never started, has ended, or expired while idle."""


@dataclass
class _Entry(Generic[State]):
    state: State
    last_seen: float


@dataclass
class StreamTable(Generic[State]):
    """Live streams' states; `factory` makes the state of a new stream."""

    factory: Callable[[], State]
    max_streams: int
    idle_timeout_s: float
    clock: Callable[[], float] = time.monotonic
    _entries: dict[Hashable, _Entry[State]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self._entries)

    def chunk(self, key: Hashable, start: bool, end: bool, feed: Callable[[State], object] | None = None) -> State:
        """The state for one chunk: a fresh one on `start` (restarting a stream that reuses its id), else the
        live one; the stream is freed when `end` is set (its state is still returned for the final answer).

        `feed` applies the chunk to that state before the table changes: when it raises, the table is as it was
        (a refused START opens no stream and keeps a live one of that id, a refused END leaves its stream live)."""
        self.sweep()
        if start:
            if key not in self._entries and len(self._entries) >= self.max_streams:
                raise StreamLimitError(f"{len(self._entries)} streams are live, the limit (max_streams) is "
                                       f"{self.max_streams}; retry when one ends, "
                                       "or raise the model's max_streams parameter")
            state = self.factory()
        elif key in self._entries:
            state = self._entries[key].state
        else:
            raise UnknownStreamError(f"stream {key} is not live (never started, ended, or idle for more than "
                                     f"{self.idle_timeout_s:g} s); send its first chunk with the START flag")
        if feed is not None:
            feed(state)
        if end:
            self._entries.pop(key, None)
        else:
            self._entries[key] = _Entry(state, self.clock())
        return state

    def sweep(self) -> list[Hashable]:
        """Frees the streams idle for longer than `idle_timeout_s`; returns their ids."""
        limit = self.clock() - self.idle_timeout_s
        expired = [key for key, entry in self._entries.items() if entry.last_seen < limit]
        for key in expired:
            del self._entries[key]
        return expired
