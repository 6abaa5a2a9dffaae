"""The generated Model Analyzer config is accepted by Model Analyzer's own parser, and says what we mean."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import require  # noqa: E402

require("model_analyzer", "pip install 'tritonkit[tune]'")
require("pytriton", "pip install 'tritonkit[serve]'")

from model_analyzer.cli.cli import CLI  # noqa: E402
from model_analyzer.config.input.config_command_profile import ConfigCommandProfile  # noqa: E402

from tritonkit.tune.analyzer.prepare import prepare  # noqa: E402
from tritonkit.tune.options import Constraints, TuneOptions  # noqa: E402


def parsed_by_model_analyzer(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> ConfigCommandProfile:
    config = ConfigCommandProfile()
    cli = CLI()
    cli.add_subcommand(cmd="profile", help="", config=config)
    monkeypatch.setattr(sys, "argv", ["model-analyzer", "profile", "-f", str(config_file)])
    cli.parse()
    return config


def test_quick_config_for_one_model(batchy_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = prepare(TuneOptions("batchy", batchy_project, constraints=Constraints(max_p99_ms=80, min_throughput=50),
                               measurement_requests=40, dry_run=True))
    cfg = plan.config
    assert cfg["profile_models"]["batchy"]["cpu_only"] is True
    assert cfg["constraints"] == {"perf_latency_p99": {"max": 80.0}, "perf_throughput": {"min": 50.0}}
    assert cfg["perf_analyzer_flags"]["measurement-request-count"] == 40
    assert cfg["run_config_search_max_model_batch_size"] == 16  # 2 x the spec's 8
    for wrapper in ("triton_server_path", "perf_analyzer_path"):
        text = Path(cfg[wrapper]).read_text()
        assert "LD_LIBRARY_PATH" in text and text.rstrip().splitlines()[-1].startswith("exec ")
    ma = parsed_by_model_analyzer(plan.tune_dir.config, monkeypatch)
    (model,) = ma.profile_models
    assert model.model_name() == "batchy" and model.cpu_only()
    assert ma.run_config_search_mode == "quick" and ma.objectives == {"perf_throughput": 10}
    assert not (batchy_project.parent / "model_repository").exists()  # a dry run writes nothing for the user


def test_brute_config_lists_the_search_space(batchy_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = prepare(TuneOptions("batchy", batchy_project, mode="brute", objective="latency", budget_minutes=600,
                               max_instances=2, max_batch_size=16, dry_run=True))
    params = plan.config["profile_models"]["batchy"]["model_config_parameters"]
    assert params["max_batch_size"] == [4, 8, 16]
    assert params["instance_group"] == [{"kind": "KIND_CPU", "count": [1, 2]}]
    assert params["dynamic_batching"]["max_queue_delay_microseconds"] == [0, 500, 2000]
    assert params["dynamic_batching"]["preferred_batch_size"] == [[], [4]]
    ma = parsed_by_model_analyzer(plan.tune_dir.config, monkeypatch)
    assert ma.objectives == {"perf_latency_p99": 10}
    from model_analyzer.config.generate.generator_utils import GeneratorUtils

    combos = GeneratorUtils.generate_combinations(ma.profile_models[0].model_config_parameters())
    assert len(combos) == 2 * 3 * 3 * 2


def test_brute_space_is_trimmed_to_the_budget(batchy_project: Path) -> None:
    plan = prepare(TuneOptions("batchy", batchy_project, mode="brute", budget_minutes=5, dry_run=True))
    params = plan.config["profile_models"]["batchy"]["model_config_parameters"]
    n = len(params["max_batch_size"]) * len(params["instance_group"][0]["count"]) * \
        len(params["dynamic_batching"]["max_queue_delay_microseconds"]) * \
        len(params["dynamic_batching"]["preferred_batch_size"])
    assert n < 3 * 3 * 4 * 2 and any("trimmed" in note for note in plan.notes)


@pytest.mark.slow  # builds through the CLI: seconds
def test_ensemble_config_names_composing_models(pipeline_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = prepare(TuneOptions("classify", pipeline_project, mode="brute", dry_run=True))
    cfg = plan.config
    assert cfg["run_config_search_mode"] == "quick" and any("quick mode only" in n for n in plan.notes)
    assert cfg["profile_models"] == ["classify"]
    assert set(cfg["ensemble_composing_models"]) == {"preprocess", "classifier"}
    assert cfg["cpu_only_composing_models"] == ["preprocess", "classifier"]
    assert "input-data" in cfg["perf_analyzer_flags"]  # the ensemble's smoke case becomes real request data
    ma = parsed_by_model_analyzer(plan.tune_dir.config, monkeypatch)
    # Model Analyzer 1.58 would swap these if profile_models were a mapping (shared schema object).
    assert [m.model_name() for m in ma.profile_models] == ["classify"]
    assert sorted(m.model_name() for m in ma.ensemble_composing_models) == ["classifier", "preprocess"]
    assert yaml.safe_load(plan.tune_dir.config.read_text()) == cfg


def test_docker_launch_profiles_the_built_repository_in_the_deploy_image(batchy_project: Path) -> None:
    plan = prepare(TuneOptions("batchy", batchy_project, launch="docker", dry_run=True))
    cfg = plan.config
    assert cfg["triton_launch_mode"] == "docker"
    assert cfg["triton_docker_image"] == "nvcr.io/nvidia/tritonserver:24.10-py3"
    assert cfg["model_repository"] == str(plan.tune_dir.built)  # the container has every backend: no fallback
    assert "triton_server_path" not in cfg


def test_remote_launch_without_a_running_server_is_one_line(batchy_project: Path) -> None:
    from tritonkit.errors import TritonkitError

    with pytest.raises(TritonkitError,
                       match="no running server found for remote launch.*tritonkit serve --background") as refused:
        prepare(TuneOptions("batchy", batchy_project, launch="remote", dry_run=True))
    # the option is the field; the file is left to the CLI edge, which names the command there
    assert (refused.value.file, refused.value.field) == ("", "--launch")


def test_bls_config_lists_the_models_it_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "router.py").write_text("# calls scorer with BLS\n")
    (tmp_path / "models" / "scorer.py").write_text("# scores\n")
    model = """
  {name}:
    backend: python
    max_batch_size: 4
    input: [{{name: X, data_type: TYPE_FP32, dims: [2]}}]
    output: [{{name: Y, data_type: TYPE_FP32, dims: [2]}}]
    files: {{model.py: models/{name}.py}}
"""
    spec = tmp_path / "tritonkit.yaml"
    spec.write_text(
        "version: 1\nmodels:"
        + model.format(name="router")
        + "    bls: {calls: [scorer]}\n"
        + model.format(name="scorer")
    )
    plan = prepare(TuneOptions("router", spec, dry_run=True))
    assert plan.target.kind == "bls" and plan.config["profile_models"] == ["router"]
    assert list(plan.config["bls_composing_models"]) == ["scorer"]
    ma = parsed_by_model_analyzer(plan.tune_dir.config, monkeypatch)
    assert [m.model_name() for m in ma.bls_composing_models] == ["scorer"]
    assert [m.model_name() for m in ma.profile_models] == ["router"]
