"""Accept/reject pairs for the single-model Triton rules: a config text parsed as tritonkit parses it,
checked by `check_model`, each finding rendered as its one-line `field: problem; fix: fix` message."""
from __future__ import annotations

from dataclasses import dataclass

from tritonkit.triton.config_parse import parse_model_config
from tritonkit.validate.model_checks import check_model

IO = 'input [{name: "IN" data_type: TYPE_FP32 dims: [4]}]\noutput [{name: "OUT" data_type: TYPE_FP32 dims: [4]}]\n'
PYTHON = 'backend: "python"\nmax_batch_size: 8\n'


@dataclass(frozen=True)
class Rule:
    """`rejected` yields exactly the one `line` (at `severity`); the close `accepted` yields nothing at all."""

    id: str
    rejected: str
    line: str
    accepted: str
    severity: str = "error"


def model(body: str = "", head: str = PYTHON, io: str = IO) -> str:
    """A python-backend model with one input and one output unless told otherwise, plus `body`."""
    return head + io + body


def lines(text: str, severity: str, name: str = "m") -> list[str]:
    """One-line messages of the findings at `severity` for the config `text` of model `name`."""
    config = parse_model_config(text, "m/config.pbtxt")
    return [f"{f.field}: {f.problem}; fix: {f.fix}" for f in check_model(name, config) if f.severity == severity]


def assert_rule(rule: Rule) -> None:
    """The rejected config gives exactly the expected message; the accepted one gives no finding."""
    assert lines(rule.rejected, rule.severity) == [rule.line]
    other = "warning" if rule.severity == "error" else "error"
    assert lines(rule.rejected, other) == []
    assert lines(rule.accepted, "error") == [] and lines(rule.accepted, "warning") == []
