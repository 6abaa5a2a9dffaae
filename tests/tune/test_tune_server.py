"""`tritonkit tune` for real: Model Analyzer 1.58 + perf_analyzer + the embedded Triton on a model where batching
matters; the winner lands in the spec's `tuned:` section and in the rebuilt config.pbtxt.

Budget: one quick search (max batch 8, 2 instances, 30-request windows, no concurrency sweep) of about two
minutes on 2 cores, then a resumed run that reuses every measurement from the checkpoint.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from google.protobuf import text_format

from tests.conftest import require  # noqa: E402

require("model_analyzer", "pip install 'tritonkit[tune]'")
require("pytriton", "pip install 'tritonkit[serve]'")

from tritonclient.grpc import model_config_pb2 as mc  # noqa: E402

from tests.conftest import run_cli  # noqa: E402
from tritonkit.serve import process  # noqa: E402

pytestmark = [pytest.mark.server, pytest.mark.slow, pytest.mark.timeout(900)]

ARGS = ["tune", "batchy", "--measurement-requests", "30", "--max-instances", "2", "--max-batch-size", "8",
        "--no-sweep", "--budget-minutes", "8", "--json"]


def _no_process_left(tune_dir: Path) -> None:
    for pid_file in (tune_dir / "pids").glob("*.pid"):
        pid = int(pid_file.read_text())
        assert not process.is_alive(pid), f"left running: {pid_file.name}"


def test_tune_writes_winner_back_and_rebuilds(batchy_project: Path) -> None:
    root = batchy_project.parent
    before = batchy_project.read_text()
    done = run_cli(*ARGS, cwd=root, timeout=800)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    tune_dir = root / ".tritonkit" / "tune" / "batchy"

    # Progress was shown while Model Analyzer worked.
    assert "measuring batchy_config_" in done.stderr and "[tune " in done.stderr

    # The winner beats the un-batched default by far on this model.
    assert summary["winner"]["configuration"] != "batchy_config_default"
    assert summary["winner"]["throughput_infer_per_s"] >= 1.5 * summary["default"]["throughput_infer_per_s"]
    # like for like only where both were measured at one concurrency (--no-sweep may leave none in common)
    assert summary["comparison"] is None or summary["gain_over_default"] == summary["comparison"]["gain"] > 1.0
    assert summary["measurements"] >= 3

    # The spec keeps the user's text and gains the overlay with provenance.
    after = batchy_project.read_text()
    assert after.startswith(before)
    entry = yaml.safe_load(after)["tuned"]["batchy"]
    prov = entry["provenance"]
    assert prov["model_analyzer_version"] == "1.58.0" and prov["objective"] == "throughput"
    assert prov["throughput_infer_per_s"] == pytest.approx(summary["winner"]["throughput_infer_per_s"], rel=1e-3)
    assert prov["p99_latency_ms"] > 0 and prov["concurrency"] == summary["winner"]["concurrency"]
    assert prov["cpu"] and prov["host"]

    # The rebuilt repository carries exactly the winning values.
    config = text_format.Parse((root / "model_repository" / "batchy" / "config.pbtxt").read_text(), mc.ModelConfig())
    assert config.max_batch_size == entry["max_batch_size"] > 1
    assert [g.count for g in config.instance_group] == [entry["instance_group"][0]["count"]]
    assert config.instance_group[0].kind == mc.ModelInstanceGroup.KIND_CPU
    assert config.HasField("dynamic_batching")
    assert (
        config.dynamic_batching.max_queue_delay_microseconds
        == entry["dynamic_batching"]["max_queue_delay_microseconds"]
    )
    winner_cfg = text_format.Parse((tune_dir / "variants" / summary["winner"]["configuration"] / "config.pbtxt")
                                   .read_text(), mc.ModelConfig())
    assert (winner_cfg.max_batch_size, winner_cfg.instance_group[0].count) == \
        (config.max_batch_size, config.instance_group[0].count)

    # Model Analyzer's own outputs and our plot sit together.
    assert (tune_dir / "results" / "metrics-model-inference.csv").is_file()
    assert Path(summary["plot"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert Path(summary["plot"]).parent == tune_dir / "reports"
    _no_process_left(tune_dir)

    # Same spec, same search: the second run resumes from the checkpoint and measures nothing new.
    again = run_cli(*ARGS, cwd=root, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "resuming" in again.stderr
    assert json.loads(again.stdout)["winner"]["configuration"] == summary["winner"]["configuration"]
    assert "measuring batchy_config_" not in again.stderr

    # A constraint nothing met is one line with a relaxed value to try, and exit code 2; the spec is untouched.
    text = batchy_project.read_text()
    failed = run_cli(*ARGS[:-1], "--max-p99-ms", "0.5", cwd=root, timeout=600)
    assert failed.returncode == 2
    last = failed.stderr.strip().splitlines()[-1]
    assert "meets p99 <= 0.5 ms" in last and "--max-p99-ms" in last and last.count("; ") == 1
    assert batchy_project.read_text() == text
    _no_process_left(tune_dir)
    assert os.listdir(tune_dir / "pids") == []
