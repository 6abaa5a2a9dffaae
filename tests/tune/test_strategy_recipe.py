"""docs/DESIGN.md's recipe "add a tuning strategy", followed: a walk that moves to the first value beating the
current one, registered in knob_search.WALKS, searches a pipeline's knobs end to end and writes its winner back
(the echo test pipeline's engine, measured from its candidates' configs: no server)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.pipelines.test_new_pipeline import SPEC
from tritonkit.plugin.host import SOURCE_ENV
from tritonkit.tune.options import Constraints, Objective, TuneOptions
from tritonkit.tune.space.knobs import Knob, Point, default_point, normalize
from tritonkit.tune.strategies import knob_search
from tritonkit.tune.strategies.budget import Budgeted, Measure, Trace, better


def first_improvement(knobs: list[Knob], measure: Measure, budget: int, objective: Objective,
                      constraints: Constraints) -> tuple[Point, Trace]:
    """Knob after knob, the first value that beats the current point is kept (step 1 of the recipe)."""
    run = Budgeted(measure, budget, knobs)
    current = normalize(default_point(knobs), knobs)
    _, score = run(current)
    for knob in knobs:
        for value in knob.values:
            done, found = run({**current, knob.key: value})
            if not done:
                return current, run.trace
            if better(found, score, objective, constraints):
                current, score = normalize({**current, knob.key: value}, knobs), found
                break
    return current, run.trace


def test_a_new_walk_searches_and_writes_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ruamel.yaml")
    monkeypatch.setenv(SOURCE_ENV, "tests.pipelines.echo.registry:PIPELINES")
    monkeypatch.setitem(knob_search.WALKS, "descent", first_improvement)   # step 2: what quick mode walks by
    (tmp_path / "model.py").write_text("class TritonPythonModel:\n    pass\n")
    spec = tmp_path / "tritonkit.yaml"
    spec.write_text(yaml.safe_dump(SPEC, sort_keys=False))
    done = knob_search.run(TuneOptions("echo", spec, joint=True, confirm_rounds=0), lambda line: None)
    assert [p[("engine", "echo_slots")] for p, _ in done.trace.measured] == [4, 2, 8]   # 8: the first better
    assert done.winner_settings == "engine.echo_slots=8"
    assert yaml.safe_load(spec.read_text())["tuned"]["engine"]["parameters"] == {"echo_slots": 8}
