"""The tune report on Model Analyzer's recorded output (tests/data/model_analyzer): the default compared with the
winner at one concurrency and bound, legend labels that name settings, only existing paths, no GPU plots on CPU."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tritonkit.tune.analyzer.outputs import drop_gpu_plots, parse_checkpoint, report_paths
from tritonkit.tune.layout import TuneDir
from tritonkit.tune.options import Constraints
from tritonkit.tune.results.measurements import TuneResults
from tritonkit.tune.results.plot import save_plot
from tritonkit.tune.results.report import comparison, legend_labels, summary
from tritonkit.tune.results.winner import choose
from tritonkit.tune.targets.model import TuneTarget

BATCHY = TuneTarget("batchy", "model")


@pytest.fixture(scope="module")
def batchy(recorded: Path) -> TuneResults:
    return parse_checkpoint(json.loads((recorded / "batchy" / "0.ckpt").read_text()), "batchy")


def test_default_and_winner_are_compared_at_one_concurrency(batchy: TuneResults) -> None:
    choice = choose(batchy, "throughput", Constraints(), "ma.log")
    # the winner peaks at concurrency 64, where the default was never measured; its own best is at 8
    assert choice.winner.best.concurrency == 64 and choice.default is not None and choice.default.best.concurrency == 8
    compared = comparison(choice, batchy, "throughput", Constraints())
    assert compared is not None and compared.concurrency == 8
    assert compared.winner.concurrency == compared.default.concurrency == 8
    assert compared.winner.variant == "batchy_config_4" and compared.default.variant == "batchy_config_default"
    report = summary(choice, batchy, BATCHY, "throughput", Constraints())
    assert report["gain_over_default"] == pytest.approx(compared.winner.throughput / compared.default.throughput)
    assert 5 < report["gain_over_default"] < 6  # 245 vs 45 infer/s; 778 at c=64 over 45 at c=8 said 17x
    assert report["comparison"]["concurrency"] == 8
    assert compared.line(Constraints()).startswith("best over default at concurrency 8: 5.")


def test_the_comparison_holds_the_default_to_the_same_latency_bound(batchy: TuneResults) -> None:
    bound = Constraints(max_p99_ms=60.0)
    choice = choose(batchy, "throughput", bound, "ma.log")
    compared = comparison(choice, batchy, "throughput", bound)
    assert compared is not None and compared.concurrency == choice.winner.best.concurrency == 8
    assert compared.winner.p99_ms <= 60 < compared.default.p99_ms and not compared.default_meets
    line = compared.line(bound)
    assert "(bound: p99 <= 60 ms)" in line and line.endswith("ms; the default does not meet the bound)")


def test_no_comparison_when_the_default_wins(recorded: Path) -> None:
    results = parse_checkpoint(json.loads((recorded / "classify" / "0.ckpt").read_text()), "classify")
    choice = choose(results, "throughput", Constraints(), "ma.log")
    assert choice.winner.is_default
    target = TuneTarget("classify", "ensemble", ("preprocess", "classifier"))
    assert comparison(choice, results, "throughput", Constraints()) is None
    assert summary(choice, results, target, "throughput", Constraints())["gain_over_default"] == 1.0


@pytest.mark.slow  # renders the report's plots: seconds
def test_legend_names_each_configuration_s_settings(batchy: TuneResults, tmp_path: Path) -> None:
    labels = legend_labels(batchy, BATCHY)
    assert labels["batchy_config_4"] == "config_4: 2 inst, batch 16, dyn 0us"
    assert labels["batchy_config_default"].startswith("default: ")
    assert len(set(labels.values())) == len(labels) == 6
    choice = choose(batchy, "throughput", Constraints(), "ma.log")
    png = save_plot(batchy, choice, Constraints(), tmp_path / "plot.png", "batchy", labels)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_only_paths_that_exist_are_printed(tmp_path: Path) -> None:
    """A run stopped by its budget has no results CSV and no reports; the HTML summary is named when written."""
    tune_dir = TuneDir(tmp_path / "tune")
    tune_dir.make()
    plot = tune_dir.plot
    plot.parent.mkdir(parents=True)
    plot.write_bytes(b"png")
    assert report_paths(tune_dir, plot, "batchy") == {"plot": plot, "reports": tune_dir.reports}
    html = tune_dir.reports / "summaries" / "batchy" / "result_summary.html"
    html.parent.mkdir(parents=True)
    html.write_text("<html></html>")
    (tune_dir.results).mkdir()
    (tune_dir.results / "metrics-model-inference.csv").write_text("Model,Concurrency\n")
    paths = report_paths(tune_dir, plot, "batchy")
    assert paths["html report"] == html and "results" in paths
    assert all(path.exists() for path in paths.values())


def test_gpu_plots_are_left_out_on_a_cpu_host(tmp_path: Path) -> None:
    if Path("/dev/nvidia0").exists():
        pytest.skip("this host has a GPU: its GPU plots are kept")
    tune_dir = TuneDir(tmp_path)
    simple = tmp_path / "plots" / "simple" / "batchy"
    simple.mkdir(parents=True)
    for name in ("gpu_mem_v_latency.png", "throughput_v_latency.png", "cpu_mem_v_latency.png"):
        (simple / name).write_bytes(b"png")
    assert drop_gpu_plots(tune_dir) == [simple / "gpu_mem_v_latency.png"]
    assert sorted(p.name for p in simple.iterdir()) == ["cpu_mem_v_latency.png", "throughput_v_latency.png"]
