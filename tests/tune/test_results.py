"""Parsing Model Analyzer's CSV and checkpoint, recorded from real runs (tests/data/model_analyzer/)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tritonkit.tune.analyzer.outputs import (
    latest_checkpoint,
    parse_checkpoint,
    parse_inference_csv,
    read_results,
)


def test_csv_rows_are_numbers_with_variant_and_verdict(recorded: Path) -> None:
    rows = parse_inference_csv((recorded / "batchy" / "metrics-model-inference.csv").read_text())
    assert len(rows) == 21
    first = rows[0]
    assert (first.variant, first.concurrency, first.throughput, first.p99_ms) == ("batchy_config_4", 64, 778.4, 96.0)
    assert first.satisfies is True and first.composing == ()
    assert {r.variant for r in rows} == {f"batchy_config_{i}" for i in range(5)} | {"batchy_config_default"}


def test_pipeline_csv_splits_top_variant_from_composing(recorded: Path) -> None:
    rows = parse_inference_csv((recorded / "classify" / "metrics-model-inference.csv").read_text())
    assert rows and all(r.variant.startswith("classify_config_") for r in rows)
    default = [r for r in rows if r.variant == "classify_config_default"]
    assert default[0].composing == ("preprocess_config_default", "classifier_config_default")


def test_checkpoint_holds_every_measurement_and_variant_config(recorded: Path) -> None:
    data = json.loads((recorded / "batchy" / "0.ckpt").read_text())
    results = parse_checkpoint(data, "batchy")
    csv_rows = parse_inference_csv((recorded / "batchy" / "metrics-model-inference.csv").read_text())
    assert {(m.variant, m.concurrency) for m in results.measurements} == {(r.variant, r.concurrency) for r in csv_rows}
    by_key = {(m.variant, m.concurrency): m for m in results.measurements}
    for row in csv_rows:  # the CSV rounds to 0.1; the checkpoint has the raw values
        m = by_key[(row.variant, row.concurrency)]
        assert m.throughput == pytest.approx(row.throughput, abs=0.06)
        assert m.p99_ms == pytest.approx(row.p99_ms, abs=0.06)
    assert results.configs["batchy_config_4"]["maxBatchSize"] == 16
    assert results.configs["batchy_config_4"]["instanceGroup"] == [{"count": 2, "kind": "KIND_CPU"}]


def test_checkpoint_of_pipeline_keeps_composing_configs(recorded: Path) -> None:
    results = parse_checkpoint(json.loads((recorded / "classify" / "0.ckpt").read_text()), "classify")
    composing = results.composing["classify_config_default"]
    assert composing == ("preprocess_config_default", "classifier_config_default")
    for name in composing:
        assert name in results.configs


def test_read_results_merges_csv_verdicts_and_survives_missing_csv(recorded: Path, tmp_path: Path) -> None:
    (tmp_path / "checkpoints").mkdir()
    shutil.copy(recorded / "batchy" / "0.ckpt", tmp_path / "checkpoints" / "0.ckpt")
    without_csv = read_results(tmp_path, tmp_path / "checkpoints", "batchy")
    assert len(without_csv.measurements) == 21 and all(m.satisfies is None for m in without_csv.measurements)
    (tmp_path / "results").mkdir()
    shutil.copy(recorded / "batchy" / "metrics-model-inference.csv", tmp_path / "results")
    merged = read_results(tmp_path, tmp_path / "checkpoints", "batchy")
    assert all(m.satisfies is True for m in merged.measurements)


def test_latest_checkpoint_is_the_highest_index(tmp_path: Path) -> None:
    assert latest_checkpoint(tmp_path / "missing") is None
    for name in ("0.ckpt", "2.ckpt", "10.ckpt", "notes.txt"):
        (tmp_path / name).write_text("{}")
    assert latest_checkpoint(tmp_path) == tmp_path / "10.ckpt"


def test_other_models_in_the_checkpoint_are_ignored(recorded: Path) -> None:
    data = json.loads((recorded / "batchy" / "0.ckpt").read_text())
    assert parse_checkpoint(data, "not_there").measurements == []
