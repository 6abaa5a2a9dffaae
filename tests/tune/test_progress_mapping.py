"""Progress messages from a recorded Model Analyzer log; mapping a winning variant back onto the spec."""
from __future__ import annotations

import json
from pathlib import Path

from tritonkit.spec.instances import InstanceGroup
from tritonkit.spec.loader import load_project
from tritonkit.spec.tuned import Provenance
from tritonkit.tune.analyzer.outputs import parse_checkpoint
from tritonkit.tune.analyzer.progress import ProgressTracker
from tritonkit.tune.results.mapping import (
    model_of_variant,
    parse_variant,
    tuned_entries,
    tuned_for,
)
from tritonkit.tune.targets.inputs import input_data_json
from tritonkit.tune.targets.model import TuneTarget

PROV = Provenance(date="2026-11-29", host="vm")


def test_progress_from_recorded_log(recorded: Path) -> None:
    tracker = ProgressTracker()
    messages = [m for line in (recorded / "batchy" / "model-analyzer.log").read_text().splitlines()
                if (m := tracker.feed(line))]
    assert messages[0] == "starting Triton"
    assert "measuring batchy_config_4 (delay us 0, instances 2, max batch 16) at concurrency 64 (5 measured)" \
        in messages
    assert messages[-1] == "writing reports"
    assert tracker.state.measured == 21


def test_winner_maps_to_tuned_and_keeps_the_spec_kind(recorded: Path, batchy_project: Path) -> None:
    results = parse_checkpoint(json.loads((recorded / "batchy" / "0.ckpt").read_text()), "batchy")
    spec = load_project(batchy_project).models["batchy"]
    gpu_spec = spec.model_copy(update={"instance_group": [InstanceGroup(kind="KIND_GPU", count=1, gpus=[0])]})
    entry = tuned_for(gpu_spec, parse_variant(results.configs["batchy_config_4"]), PROV)
    assert entry.max_batch_size == 16
    assert entry.instance_group == [InstanceGroup(kind="KIND_GPU", count=2, gpus=[0])]
    assert entry.dynamic_batching is not None and entry.dynamic_batching.preferred_batch_size == []
    default = tuned_for(spec, parse_variant(results.configs["batchy_config_default"]), PROV)
    assert default.dynamic_batching is None and default.max_batch_size == 8


def test_pipeline_winner_maps_every_composing_model(recorded: Path, pipeline_project: Path) -> None:
    specs = load_project(pipeline_project).models
    results = parse_checkpoint(json.loads((recorded / "classify" / "0.ckpt").read_text()), "classify")
    target = TuneTarget("classify", "ensemble", ("preprocess", "classifier"))
    variant = next(v for v in results.composing if v != "classify_config_default")
    entries = tuned_entries(results, variant, target, specs, PROV)
    assert set(entries) == {"classify", "preprocess", "classifier"}
    assert entries["classify"].instance_group is None  # an ensemble has no instances
    assert entries["classify"].max_batch_size <= min(entries["preprocess"].max_batch_size,
                                                     entries["classifier"].max_batch_size)
    assert model_of_variant("classifier_config_3", target.models) == "classifier"


def test_golden_request_becomes_perf_analyzer_input_data() -> None:
    import numpy as np

    sample = {"RAW": np.array([[5.1, 3.5, 1.4, 0.2], [6.7, 3.0, 5.2, 2.3]], dtype=np.float32),
              "TEXT": np.array([[b"hi"], [b"yo"]], dtype=object)}
    doc = input_data_json(sample, batched=True)
    assert doc["data"][0]["RAW"]["shape"] == [4]
    assert doc["data"][0]["RAW"]["content"] == [float(np.float32(v)) for v in (5.1, 3.5, 1.4, 0.2)]
    assert doc["data"][0]["TEXT"] == {"content": ["hi"], "shape": [1]}


def test_bytes_that_are_not_text_go_to_perf_analyzer_serialized_in_base64() -> None:
    import base64

    import numpy as np

    picture = b"\x89PNG\r\n\x1a\n\x00\xff"   # an encoded image's first bytes: not UTF-8
    doc = input_data_json({"IMAGE": np.array([[picture]], dtype=object)}, batched=True)
    assert doc["data"][0]["IMAGE"] == {"b64": base64.b64encode(len(picture).to_bytes(4, "little") + picture).decode(),
                                       "shape": [1]}
