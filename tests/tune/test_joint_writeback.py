"""A joint search's winner written back: one `tuned:` entry per step (instances, queue delay, preferred sizes and
threads) with the pipeline's measurement as provenance, and a rebuild whose config.pbtxt files carry them."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from google.protobuf import text_format

from tests.conftest import run_cli
from tritonkit.spec.loader import load_project
from tritonkit.spec.tuned import Provenance
from tritonkit.triton.model_config import pb as mc
from tritonkit.tune.results.writeback import write_back_spec
from tritonkit.tune.space.steps import THREADS_PARAMETER, apply_point, parameters, pipeline_knobs, tuned_models
from tritonkit.tune.targets.pipeline import resolve_joint

pytestmark = pytest.mark.slow  # a write-back and rebuild: seconds


def _config(path: Path) -> mc.ModelConfig:
    return text_format.Parse(path.read_text(), mc.ModelConfig())


def test_winner_lands_in_each_steps_overlay_and_the_rebuild(tmp_path: Path) -> None:
    assert run_cli("init", "--pipeline", "classifier", str(tmp_path)).returncode == 0
    spec = tmp_path / "tritonkit.yaml"
    data = yaml.safe_load(spec.read_text())
    data["models"]["classifier"]["parameters"] = {THREADS_PARAMETER: 0}  # gives the classifier a threads knob
    spec.write_text(yaml.safe_dump(data, sort_keys=False))
    assert run_cli("build", cwd=tmp_path).returncode == 0
    before = spec.read_text()
    project = load_project(spec)
    target = resolve_joint(project, "classify")
    knobs = pipeline_knobs(target.models, project.models, max_instances=2)
    built = {m: _config(tmp_path / "model_repository" / m / "config.pbtxt") for m in target.models}
    point = {k.key: k.default for k in knobs} | {
        ("preprocess", "instances"): 2, ("preprocess", "queue_delay_us"): 5000,
        ("classifier", "preferred"): (16,), ("classifier", "threads"): 1}
    prov = Provenance(date="2026-12-02T00:00:00+00:00", host="h", objective="throughput",
                      throughput_infer_per_s=321.0, p99_latency_ms=9.5, concurrency=4,
                      notes=["joint end-to-end search (descent, 7 configurations)"])
    tuned = tuned_models(point, knobs, "classify", project.models, built, prov)
    assert sorted(tuned) == ["classifier", "classify", "preprocess"]

    result = write_back_spec(spec, tuned)

    after = spec.read_text()
    assert after.startswith(before)  # the user's text kept, the overlay appended
    overlay = yaml.safe_load(after)["tuned"]
    assert overlay["preprocess"]["instance_group"] == [{"kind": "KIND_CPU", "count": 2}]
    assert overlay["preprocess"]["dynamic_batching"]["max_queue_delay_microseconds"] == 5000
    assert overlay["classifier"]["dynamic_batching"]["preferred_batch_size"] == [16]
    assert overlay["classifier"]["parameters"] == {THREADS_PARAMETER: 1}
    for entry in overlay.values():
        assert entry["provenance"]["throughput_infer_per_s"] == 321.0
        assert entry["provenance"]["notes"] == ["joint end-to-end search (descent, 7 configurations)"]
    repo = result.repository
    pre, cls = _config(repo / "preprocess" / "config.pbtxt"), _config(repo / "classifier" / "config.pbtxt")
    assert pre.instance_group[0].count == 2 and pre.dynamic_batching.max_queue_delay_microseconds == 5000
    assert list(cls.dynamic_batching.preferred_batch_size) == [16]
    assert cls.parameters[THREADS_PARAMETER].string_value == "1"
    # the rebuilt configs are what the search served for that point
    for name in ("preprocess", "classifier"):
        served = apply_point(built[name], point, name, parameters(knobs))
        rebuilt = _config(repo / name / "config.pbtxt")
        assert rebuilt.instance_group[0].count == served.instance_group[0].count
        assert rebuilt.dynamic_batching == served.dynamic_batching
