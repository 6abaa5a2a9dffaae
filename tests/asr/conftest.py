"""ASR test fixtures shared by the model and streaming tests: the shipped model and held-out clips' features."""
from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

from tests.conftest import REPO_ROOT
from tritonkit.pipelines.asr.runtime.features import compute_fbank

if str(REPO_ROOT) not in sys.path:  # `examples` is a package at the repository root
    sys.path.insert(0, str(REPO_ROOT))


@pytest.fixture(scope="module")
def model() -> Any:
    """The committed command-word CTC model (tritonkit.pipelines.asr.commands_ctc), in eval mode."""
    from tritonkit.pipelines.asr.commands_ctc.model import load

    return load()


def heldout_features(index: int) -> np.ndarray:
    """Fbank frames [T, 80] of the index-th committed held-out WAV."""
    from examples.asr.heldout import read_heldout, read_wav

    pcm, rate = read_wav(read_heldout()[index].path)
    return compute_fbank(pcm, rate)
