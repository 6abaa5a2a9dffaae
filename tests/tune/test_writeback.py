"""Writing `tuned:` into a spec: the user's text stays byte for byte, the loader applies the result."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import require  # noqa: E402

require("ruamel.yaml", "pip install 'tritonkit[tune]'")

from tritonkit.spec.instances import InstanceGroup  # noqa: E402
from tritonkit.spec.loader import load_project  # noqa: E402
from tritonkit.spec.scheduling import DynamicBatching  # noqa: E402
from tritonkit.spec.tuned import Provenance, TunedModel  # noqa: E402
from tritonkit.tune.results.writeback import HEADER, updated_spec_text, write_tuned  # noqa: E402

PROV = Provenance(date="2026-11-29T08:47:03+00:00", host="vm", cpu="Xeon (2 cores)", model_analyzer_version="1.58.0",
                  objective="throughput", constraints={"max_p99_ms": 100.0}, throughput_infer_per_s=778.36,
                  p99_latency_ms=95.998, concurrency=64)


def tuned(batch: int = 16, count: int = 2, kind: str = "KIND_CPU") -> TunedModel:
    return TunedModel(max_batch_size=batch, instance_group=[InstanceGroup(kind=kind, count=count)],
                      dynamic_batching=DynamicBatching(max_queue_delay_microseconds=0), provenance=PROV)


def test_appends_block_and_keeps_every_user_byte(batchy_project: Path) -> None:
    before = batchy_project.read_text()
    after = updated_spec_text(before, {"batchy": tuned()}, "tritonkit.yaml")
    assert after.startswith(before)
    added = after[len(before):]
    assert HEADER in added and "instance_group: [{kind: KIND_CPU, count: 2}]" in added
    assert yaml.safe_load(after)["tuned"]["batchy"]["provenance"]["throughput_infer_per_s"] == 778.36


def test_rewriting_replaces_only_the_block_and_keeps_other_entries(batchy_project: Path) -> None:
    first = updated_spec_text(batchy_project.read_text(), {"batchy": tuned(), "other": tuned(4, 1)}, "f")
    user_tail = "# a comment the user added after tuned\ndeploy:\n  http_port: 9000\n"
    second = updated_spec_text(first + user_tail, {"batchy": tuned(8, 1)}, "f")
    assert second.count(HEADER) == 1 and second.endswith(user_tail)
    data = yaml.safe_load(second)["tuned"]
    assert data["batchy"]["max_batch_size"] == 8 and data["other"]["max_batch_size"] == 4
    assert second.startswith(batchy_project.read_text())


def test_spec_with_includes_comments_and_flow_maps_round_trips(pipeline_project: Path) -> None:
    spec = pipeline_project
    spec.write_text(spec.read_text() + "deploy:\n  http_port: 9000   # a user comment\n")
    before = spec.read_text()
    write_tuned(spec, {"classifier": tuned(8, 2), "classify": TunedModel(max_batch_size=8, provenance=PROV)}, "s")
    after = spec.read_text()
    assert after.startswith(before)  # ruamel's full round trip would re-indent "- {...}" and rewrite [{kind: ..}]
    project = load_project(spec)
    assert project.models["classifier"].max_batch_size == 8
    assert project.models["classifier"].instance_group[0].count == 2
    assert project.models["classify"].max_batch_size == 8


def test_kind_and_other_batching_fields_survive(batchy_project: Path) -> None:
    entry = TunedModel(instance_group=[InstanceGroup(kind="KIND_GPU", count=3, gpus=[0])],
                       dynamic_batching=DynamicBatching(preferred_batch_size=[4, 8], max_queue_delay_microseconds=500,
                                                        preserve_ordering=True), provenance=PROV)
    data = yaml.safe_load(updated_spec_text(batchy_project.read_text(), {"batchy": entry}, "f"))["tuned"]["batchy"]
    assert data["instance_group"] == [{"kind": "KIND_GPU", "count": 3, "gpus": [0]}]
    assert data["dynamic_batching"] == {"preferred_batch_size": [4, 8], "max_queue_delay_microseconds": 500,
                                        "preserve_ordering": True}
    assert TunedModel.model_validate(data).dynamic_batching.preserve_ordering is True


@pytest.mark.parametrize("text", ["models: {}\n", "models: {}"])
def test_file_without_trailing_newline(text: str) -> None:
    out = updated_spec_text(text, {"m": tuned()}, "f")
    assert out.startswith(text) and yaml.safe_load(out)["tuned"]["m"]["max_batch_size"] == 16
