"""Quick search measures without preferred batch sizes; writing its winner back must not drop the user's silently."""
from __future__ import annotations

from pathlib import Path

import yaml

from tests.conftest import require

require("ruamel.yaml", "pip install 'tritonkit[tune]'")

from google.protobuf import text_format  # noqa: E402
from tritonclient.grpc import model_config_pb2 as mc  # noqa: E402

from tritonkit.spec.loader import load_project  # noqa: E402
from tritonkit.spec.tuned import Provenance  # noqa: E402
from tritonkit.tune.results.mapping import tuned_for  # noqa: E402
from tritonkit.tune.results.writeback import write_tuned  # noqa: E402

PROV = Provenance(date="2026-11-30", host="vm")


def with_preferred(batchy_project: Path, sizes: list[int]) -> Path:
    text = batchy_project.read_text().replace(
        "    instance_group:",
        f"    dynamic_batching: {{preferred_batch_size: {sizes}, max_queue_delay_microseconds: 500}}\n"
        "    instance_group:", 1)
    batchy_project.write_text(text)
    return batchy_project


def variant(max_batch: int, preferred: list[int]) -> mc.ModelConfig:
    """A variant as quick search writes it: dynamic batching with the spec's delay, preferred sizes cleared."""
    sizes = " ".join(f"preferred_batch_size: {s}" for s in preferred)
    return text_format.Parse(
        f"""name: "batchy_config_3" max_batch_size: {max_batch}
        instance_group {{ count: 2 kind: KIND_CPU }}
        dynamic_batching {{ max_queue_delay_microseconds: 500 {sizes} }}""",
        mc.ModelConfig(),
    )


def test_quick_winner_keeps_the_spec_preferred_sizes_and_says_so(batchy_project: Path) -> None:
    spec_path = with_preferred(batchy_project, [4, 8])
    spec = load_project(spec_path).models["batchy"]
    entry = tuned_for(spec, variant(16, []), PROV)
    assert entry.dynamic_batching is not None and entry.dynamic_batching.preferred_batch_size == [4, 8]
    assert entry.provenance.notes == ["dynamic_batching.preferred_batch_size [4, 8] kept from the spec "
                                      "(measured without preferred sizes)"]
    write_tuned(spec_path, {"batchy": entry}, "tritonkit.yaml")
    written = yaml.safe_load(spec_path.read_text())["tuned"]["batchy"]
    assert written["dynamic_batching"]["preferred_batch_size"] == [4, 8]
    assert "kept from the spec" in written["provenance"]["notes"][0]
    reloaded = load_project(spec_path).models["batchy"]  # the loader applies the tuned overlay
    assert reloaded.dynamic_batching is not None and reloaded.dynamic_batching.preferred_batch_size == [4, 8]
    assert reloaded.max_batch_size == 16 and reloaded.instance_group[0].count == 2


def test_sizes_above_the_tuned_max_batch_size_are_dropped_with_a_note(batchy_project: Path) -> None:
    spec = load_project(with_preferred(batchy_project, [4, 8])).models["batchy"]
    entry = tuned_for(spec, variant(4, []), PROV)
    assert entry.dynamic_batching is not None and entry.dynamic_batching.preferred_batch_size == [4]
    assert entry.provenance.notes[0].endswith("[8] dropped: above the tuned max_batch_size 4")
    assert PROV.notes == []  # the shared provenance is not modified


def test_measured_preferred_sizes_win_and_need_no_note(batchy_project: Path) -> None:
    spec = load_project(with_preferred(batchy_project, [4, 8])).models["batchy"]
    entry = tuned_for(spec, variant(16, [16]), PROV)
    assert entry.dynamic_batching is not None and entry.dynamic_batching.preferred_batch_size == [16]
    assert entry.provenance.notes == []
    spec_path = batchy_project
    write_tuned(spec_path, {"batchy": entry}, "tritonkit.yaml")
    assert "notes" not in yaml.safe_load(spec_path.read_text())["tuned"]["batchy"]["provenance"]
