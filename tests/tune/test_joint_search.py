"""The joint pipeline search without a server: each step's knobs from the spec, the grid's size, points applied to
configs, and coordinate descent keeping to its budget while finding what the full grid finds."""
from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.conftest import run_cli
from tritonkit.spec.loader import load_project
from tritonkit.triton.model_config import pb as mc
from tritonkit.tune.options import Constraints
from tritonkit.tune.results.measurements import Measurement
from tritonkit.tune.space.knobs import Knob, Point, default_point, grid, grid_size, point_id
from tritonkit.tune.space.steps import apply_point, pipeline_knobs
from tritonkit.tune.strategies import descent
from tritonkit.tune.strategies.budget import better
from tritonkit.tune.strategies.descent import coordinate_descent
from tritonkit.tune.strategies.grid import grid_search
from tritonkit.tune.targets.pipeline import resolve_joint


@pytest.fixture(scope="module")
def classifier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("classifier")
    assert run_cli("init", "--pipeline", "classifier", str(root)).returncode == 0
    return root / "tritonkit.yaml"


def test_knobs_of_the_classifier_ensemble(classifier: Path) -> None:
    project = load_project(classifier)
    target = resolve_joint(project, "classify")
    assert target.models == ("classify", "preprocess", "classifier") and target.kind == "ensemble"
    knobs = pipeline_knobs(target.models, project.models, max_instances=2)
    by_key = {k.key: k for k in knobs}
    # the ensemble itself has nothing to search; each step: instances, queue delay, preferred sizes
    assert {k.step for k in knobs} == {"preprocess", "classifier"}
    assert by_key[("preprocess", "instances")].values == (1, 2) and by_key[("preprocess", "instances")].default == 1
    assert by_key[("preprocess", "queue_delay_us")].values == (0, 500, 1000, 5000)
    assert by_key[("preprocess", "queue_delay_us")].default == 500
    assert by_key[("classifier", "preferred")].values == ((8, 16), (16,))
    assert ("classifier", "threads") not in by_key  # a Python model without intra_op_thread_count
    only = pipeline_knobs(target.models, project.models, 2, names=("instances",))
    assert [k.name for k in only] == ["instances", "instances"]


def _spec(**fields: object) -> dict:
    return {"backend": "python", "max_batch_size": 8, "input": [{"name": "X", "data_type": "TYPE_FP32", "dims": [1]}],
            "output": [{"name": "Y", "data_type": "TYPE_FP32", "dims": [1]}], **fields}


@pytest.mark.slow  # searches with builds: seconds to a minute
def test_threads_sequence_and_unbatched_steps(tmp_path: Path) -> None:
    spec = tmp_path / "tritonkit.yaml"
    (tmp_path / "m.py").write_text("")
    (tmp_path / "m.onnx").write_bytes(b"")
    models = {
        "onnxish": _spec(parameters={"intra_op_thread_count": 0}, files={"model.py": "m.py"}),
        "exported": {**_spec(source={"onnx": "m.onnx"}), "backend": None},  # built as an onnxruntime model
        "plain": _spec(files={"model.py": "m.py"}),  # no dynamic batching: "off" is its default
        "stateful": _spec(sequence_batching={}, files={"model.py": "m.py"}),
        "top": _spec(files={"model.py": "m.py"}, bls={"calls": ["onnxish", "exported", "plain", "stateful"]}),
    }
    spec.write_text(yaml.safe_dump({"version": 1, "models": models}))
    project = load_project(spec)
    target = resolve_joint(project, "top")
    assert target.kind == "bls" and target.models == ("top", "onnxish", "exported", "plain", "stateful")
    knobs = pipeline_knobs(target.models, project.models, max_instances=2)
    keys = {k.key for k in knobs}
    assert {("onnxish", "threads"), ("exported", "threads")} <= keys
    assert not any(step == "stateful" for step, _ in keys)
    delay = next(k for k in knobs if k.key == ("plain", "queue_delay_us"))
    assert delay.values[0] is None and delay.default is None
    # preferred sizes collapse where batching is off: the grid holds each configuration once, and its size says so
    points = list(grid(knobs))
    assert len(points) == len({point_id(p) for p in points}) == grid_size(knobs)
    assert grid_size(knobs) < math.prod(len(k.values) for k in knobs)


def test_apply_point_edits_the_step_config() -> None:
    config = mc.ModelConfig(name="s", backend="python", max_batch_size=8)
    config.instance_group.add(kind=mc.ModelInstanceGroup.KIND_CPU, count=1)
    config.dynamic_batching.max_queue_delay_microseconds = 500
    point: Point = {("s", "instances"): 3, ("s", "queue_delay_us"): 2000, ("s", "preferred"): (8,),
                    ("s", "threads"): 2, ("other", "instances"): 4}
    out = apply_point(config, point, "s", {("s", "threads"): "intra_op_thread_count"})
    assert out.instance_group[0].count == 3 and out.dynamic_batching.max_queue_delay_microseconds == 2000
    assert list(out.dynamic_batching.preferred_batch_size) == [8]
    assert out.parameters["intra_op_thread_count"].string_value == "2"
    off = apply_point(config, {("s", "queue_delay_us"): None}, "s", {})
    assert not off.HasField("dynamic_batching") and config.HasField("dynamic_batching")  # a copy was edited


def _separable() -> tuple[Callable[[Point], Measurement], dict[str, int]]:
    """A pipeline whose throughput is the slowest step's: each step's rate grows with its instances and delay."""
    calls = {"n": 0}

    def measure(point: Point) -> Measurement:
        calls["n"] += 1
        rates = []
        for step in ("a", "b"):
            inst, delay = point[(step, "instances")], point[(step, "queue_delay_us")]
            rates.append(100.0 * inst * (1.5 if delay == 1000 else 1.0) * (2 if step == "b" else 1))
        return Measurement("v", 4, min(rates), 10.0 + point[("a", "queue_delay_us")] / 1000)

    return measure, calls


KNOBS = [Knob("a", "instances", (1, 2, 3), 1), Knob("a", "queue_delay_us", (0, 1000, 5000), 0),
         Knob("b", "instances", (1, 2, 3), 1), Knob("b", "queue_delay_us", (0, 1000, 5000), 0)]


def test_descent_finds_the_grid_best_with_fewer_measurements() -> None:
    descent, _ = _separable()
    best, trace = coordinate_descent(KNOBS, descent, 40, "throughput", Constraints())
    grid_run, _ = _separable()
    grid_best, grid_trace = grid_search(KNOBS, grid_run, 1000, "throughput", Constraints())
    assert len(grid_trace.measured) == grid_size(KNOBS) == 81
    assert best[("a", "instances")] == 3 and best[("a", "queue_delay_us")] == 1000
    assert descent(best).throughput == grid_run(grid_best).throughput == 450.0  # the plateau crossed
    assert len(trace.measured) * 3 <= len(grid_trace.measured) and not trace.budget_hit


def test_descent_keeps_to_its_budget_and_starts_at_the_default() -> None:
    run, calls = _separable()
    _, trace = coordinate_descent(KNOBS, run, 5, "throughput", Constraints())
    assert len(trace.measured) == 5 == calls["n"] and trace.budget_hit
    assert trace.measured[0][0] == default_point(KNOBS)


def test_descent_splits_a_steps_threads_between_its_instances(monkeypatch: pytest.MonkeyPatch) -> None:
    """On 2 cores, 2 instances of 2 threads oversubscribe and 1 instance of 1 thread leaves a core idle: each move
    alone loses, 2 instances of 1 thread each wins. The descent tries that pair; one knob at a time it would not."""
    knobs = [Knob("s", "instances", (1, 2), 1), Knob("s", "threads", (0, 1, 2), 0)]
    rates = {(1, 0): 100.0, (1, 2): 100.0, (1, 1): 60.0, (2, 0): 80.0, (2, 2): 80.0, (2, 1): 150.0}

    def measure(point: Point) -> Measurement:
        return Measurement("v", 4, rates[(point[("s", "instances")], point[("s", "threads")])], 10.0)

    best, trace = coordinate_descent(knobs, measure, 10, "throughput", Constraints(), cores=2)
    assert best == {("s", "instances"): 2, ("s", "threads"): 1}
    assert {("s", "instances"): 2, ("s", "threads"): 1} in [p for p, _ in trace.measured][:3]   # the first pass
    monkeypatch.setattr(descent, "_split_threads", lambda *_: {})   # one knob at a time: stuck at the default
    assert coordinate_descent(knobs, measure, 10, "throughput", Constraints(), cores=2)[0] == default_point(knobs)


def test_the_latency_bound_comes_first_and_small_gains_are_noise() -> None:
    bound = Constraints(max_p99_ms=10.5)
    fast_slow = Measurement("a", 4, 300.0, 11.0)
    ok = Measurement("b", 4, 150.0, 10.0)
    assert better(ok, fast_slow, "throughput", bound) and not better(fast_slow, ok, "throughput", bound)
    # with the bound, descent does not take a queue delay that breaks it
    run, _ = _separable()
    best, _ = coordinate_descent(KNOBS, run, 60, "throughput", Constraints(max_p99_ms=10.5))
    assert best[("a", "queue_delay_us")] == 0
    assert not better(Measurement("c", 4, 102.0, 9.0), Measurement("d", 4, 100.0, 9.0), "throughput", Constraints())


@pytest.mark.slow  # searches with builds: seconds to a minute
def test_dry_run_prints_the_space_and_measures_nothing(classifier: Path) -> None:
    done = run_cli("tune", "classify", "--joint", "--dry-run", "--knobs", "instances,queue_delay_us", "--json",
                   cwd=classifier.parent)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["dry_run"] and plan["models"] == ["classify", "preprocess", "classifier"]
    assert plan["grid_size"] == 64 and len(plan["knobs"]) == 4
    assert not (classifier.parent / ".tritonkit" / "tune").exists()  # nothing built nor measured
