"""exporter: auto falls back to the TorchScript exporter when the dynamo graph fails verification, and says why."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow  # exports in the child process (torch): minutes, so out of the unit subset

LSTM = '''
import torch


class Tagger(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, 16, batch_first=True)

    def forward(self, x):
        return self.lstm(x)[0]


def build():
    torch.manual_seed(0)
    return Tagger().eval(), (torch.randn(2, 10, 8),)
'''


def test_lstm_over_dynamic_time_falls_back_to_torchscript(exporter, write_module):
    project = write_module("tagger", LSTM)
    result = exporter("tagger", {"python": "tagger:build"}, {"dynamic_axes": {"x": {1: "time"}}}, 4,
                      project_dir=project, cache_dir=project / "cache")
    first, second = result.attempts
    assert (first["exporter"], first["stage"]) == ("dynamo", "verification")
    assert "the graph declares" in first["error"]  # dynamo froze the output's time axis at the example's 10
    assert result.exporter == "torchscript" and second["stage"] == "done"
    assert result.exporter_reason.startswith("fallback: dynamo verification failed: model 'tagger': output 'output'")
    assert result.outputs == [{"name": "output", "data_type": "TYPE_FP32", "dims": [-1, 16]}]
    assert any("x=[2, 20, 8]" in case for case in result.cases)
