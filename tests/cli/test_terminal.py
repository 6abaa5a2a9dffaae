"""`tritonkit build` on a terminal: one live export line per model, kept once the model is done (a pipe keeps
every `[export MODEL Ns] stage` line, as before)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.serve.test_status import run_in_terminal
from tests.smoke.test_smoke_embedded import copy_example

pytestmark = pytest.mark.slow  # a build with exports on a pseudo-terminal: about half a minute

pytest.importorskip("torch", reason="the example's mlp is exported from PyTorch: pip install 'tritonkit[export]'")


def screen(output: str) -> list[str]:
    """The lines a terminal shows at the end: enough of it for rich's live line (\\r, erase line, cursor up)."""
    lines = [""]
    for token in re.split(r"(\x1b\[[0-9;?]*[A-Za-z]|\r|\n)", output):
        if token == "\n":
            lines.append("")
        elif token == "\x1b[2K":
            lines[-1] = ""
        elif token == "\x1b[1A":
            lines.pop()
        elif token and token != "\r" and not token.startswith("\x1b"):
            lines[-1] += token
    return lines


def test_build_on_a_terminal_redraws_the_export_line_and_keeps_one_per_model(tmp_path: Path) -> None:
    project = copy_example(tmp_path / "project")
    out = run_in_terminal(["build"], project, {"CI": "", "NO_COLOR": ""})
    stages = re.findall(r"\[export mlp +[0-9.]+s\] ([^\r\n\x1b]+)", out)
    assert len(set(stages)) >= 3, out[-2000:]  # load source, export, verify ... each drawn over the last
    shown = screen(out)
    kept = [line for line in shown if "[export" in line]
    assert len(kept) == 1 and kept[0].startswith("[export mlp") and kept[0].endswith(stages[-1]), shown
    assert any(line.startswith("wrote ") for line in shown)
