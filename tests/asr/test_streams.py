"""The streaming models' per-stream state table: lifetimes, the live-stream bound and idle expiry."""
from __future__ import annotations

import pytest

from tritonkit.pipelines.asr.runtime.streams import StreamLimitError, StreamTable, UnknownStreamError


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def table(clock: Clock, max_streams: int = 2, idle: float = 10.0) -> StreamTable[list[int]]:
    return StreamTable(factory=list, max_streams=max_streams, idle_timeout_s=idle, clock=clock)


def test_state_lives_from_start_to_end_and_streams_are_apart() -> None:
    streams = table(Clock())
    streams.chunk(1, start=True, end=False).append(10)
    streams.chunk(2, start=True, end=False).append(20)
    streams.chunk(1, start=False, end=False).append(11)
    assert streams.chunk(1, start=False, end=True) == [10, 11]  # the final chunk still sees the state
    assert len(streams) == 1
    with pytest.raises(UnknownStreamError, match="stream 1 is not live"):
        streams.chunk(1, start=False, end=False)


def test_a_start_on_a_live_id_restarts_that_stream() -> None:
    streams = table(Clock())
    streams.chunk(7, start=True, end=False).append(1)
    assert streams.chunk(7, start=True, end=False) == []


def test_new_streams_beyond_the_bound_are_refused_until_one_ends() -> None:
    streams = table(Clock(), max_streams=2)
    streams.chunk(1, start=True, end=False)
    streams.chunk(2, start=True, end=False)
    with pytest.raises(StreamLimitError, match="2 streams are live, the limit"):
        streams.chunk(3, start=True, end=False)
    streams.chunk(1, start=False, end=True)
    assert streams.chunk(3, start=True, end=False) == []


def test_idle_streams_expire_and_free_their_slot() -> None:
    clock = Clock()
    streams = table(clock, max_streams=1, idle=5.0)
    streams.chunk(1, start=True, end=False)
    clock.now = 4.0
    streams.chunk(1, start=False, end=False)  # a chunk keeps it alive
    clock.now = 9.5
    assert streams.sweep() == [1]
    with pytest.raises(UnknownStreamError, match="idle for more than 5 s"):
        streams.chunk(1, start=False, end=False)
    assert streams.chunk(2, start=True, end=False) == []
