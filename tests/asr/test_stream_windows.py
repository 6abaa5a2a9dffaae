"""Streaming window arithmetic against the shipped model: chunked, batched log-probs equal the offline ones."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.asr.conftest import heldout_features
from tritonkit.pipelines.asr.commands_ctc.model import RECEPTIVE_FRAMES, SUBSAMPLING
from tritonkit.pipelines.asr.runtime.stream_windows import FrameBuffer, Receptive, Window, batch_calls, window_outputs

FIELD = Receptive(RECEPTIVE_FRAMES, SUBSAMPLING)


def _advanced(buffer: FrameBuffer | None, window: Window) -> FrameBuffer:
    assert buffer is not None
    buffer.advance(window)
    return buffer


def _stream_all(model, utterances: list[np.ndarray], chunk_frames: list[int]) -> tuple[list[np.ndarray], list[int]]:
    """Feeds the utterances' frames in chunks, all streams in step, one batch of calls per step."""
    buffers: list[FrameBuffer | None] = [FrameBuffer(FIELD) for _ in utterances]
    outputs: list[list[np.ndarray]] = [[] for _ in utterances]
    positions = [0] * len(utterances)
    batch_sizes = []
    while any(b is not None for b in buffers):
        live, windows = [], []
        for k, (buffer, feats) in enumerate(zip(buffers, utterances)):
            if buffer is None:
                continue
            step = chunk_frames[k]
            buffer.add(feats[positions[k]:positions[k] + step])
            positions[k] += step
            final = positions[k] >= len(feats)
            window = buffer.window(final)
            if window is not None:
                live.append((k, final))
                windows.append(window)
            elif final:
                buffers[k] = None
        for call in batch_calls(windows, SUBSAMPLING):
            batch_sizes.append(len(call.batch))
            with torch.no_grad():
                log_probs = model(torch.from_numpy(call.batch)).numpy()
            for i, rows in window_outputs(call, log_probs, windows, SUBSAMPLING).items():
                k, final = live[i]
                outputs[k].append(rows)
                buffers[k] = None if final else _advanced(buffers[k], windows[i])
    return [np.concatenate(o) for o in outputs], batch_sizes


#: The five longest held-out utterances (1.7-2 s): long enough for outputs before the end of the stream.
LONGEST = (15, 8, 16, 0, 28)


@pytest.mark.slow  # the shipped model (torch) over held-out audio in many chunkings: tens of seconds
@pytest.mark.parametrize("chunks", [[16] * 5, [7, 37, 16, 16, 3], [1, 250, 13, 16, 9]])
def test_chunked_batched_log_probs_equal_offline(model, chunks) -> None:
    """160 ms chunks (16 frames) and odd sizes, five streams of different lengths batched together."""
    utterances = [heldout_features(i) for i in LONGEST]
    streamed, batch_sizes = _stream_all(model, utterances, chunks)
    for feats, got in zip(utterances, streamed):
        with torch.no_grad():
            offline = model(torch.from_numpy(feats)[None])[0].numpy()
        assert got.shape == offline.shape
        np.testing.assert_allclose(got, offline, atol=1e-4, rtol=1e-4)
    assert max(batch_sizes) > 1


def test_ready_outputs_need_right_context_until_the_end() -> None:
    assert FIELD.ready(FIELD.frames + 1, final=False) == 0
    assert FIELD.ready(FIELD.frames + 2, final=False) == 1
    assert FIELD.ready(7, final=True) == 4
    assert FIELD.window_start(0) == 0 and FIELD.window_start(100) % SUBSAMPLING == 0


def test_padding_goes_only_where_outputs_are_not_taken() -> None:
    feats = np.ones((10, 80), np.float32)
    mid = Window(feats[:6], 0, 0, 1, fixed_left=True, fixed_right=False)        # padded on the right
    end = Window(feats[:8], 40, 30, 34, fixed_left=False, fixed_right=True)     # padded on the left, even amount
    whole = Window(feats[:7], 0, 0, 4, fixed_left=True, fixed_right=True)       # cannot be padded
    calls = batch_calls([mid, end, whole], SUBSAMPLING)
    shapes = sorted((c.batch.shape[1], len(c.members)) for c in calls)
    assert shapes == [(7, 2), (8, 1)]   # the unpaddable window sets a length the mid-stream one is padded to
    merged = {i: pad for c in calls for i, pad in c.members}
    assert merged == {0: 0, 1: 0, 2: 0}
    odd_end = Window(feats[:5], 40, 30, 32, fixed_left=False, fixed_right=True)
    (call,) = batch_calls([odd_end, Window(feats[:9], 0, 0, 1, True, False)], SUBSAMPLING)
    assert call.batch.shape[1] == 9 and dict(call.members)[0] == 4
    assert np.all(call.batch[0, :4] == 0) and np.all(call.batch[0, 4:] == 1)
