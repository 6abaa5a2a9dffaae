"""`tritonkit tune llm --joint`: the LLM engine's knobs (generations per step, the KV budget, threads) searched for
tokens/s under a p99 time-to-first-token and a p99 inter-token bound, measured with
the project's streaming clients; the winner written to generate's `tuned:` overlay and served after a rebuild."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from google.protobuf import text_format

from tests.conftest import run_cli
from tritonkit.spec.loader import load_project
from tritonkit.spec.tuned import Provenance
from tritonkit.triton.model_config import pb as mc
from tritonkit.tune.options import Constraints
from tritonkit.tune.results.measurements import Measurement
from tritonkit.tune.results.winner import choose, meets
from tritonkit.tune.space.knobs import Knob, Point
from tritonkit.tune.space.steps import pipeline_knobs, point_configs, tuned_models
from tritonkit.tune.strategies.descent import coordinate_descent
from tritonkit.tune.targets.pipeline import resolve_joint


@pytest.fixture(scope="module")
def starter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("llm")
    assert run_cli("init", "--pipeline", "llm", str(root)).returncode == 0
    return root / "tritonkit.yaml"


def _llm(tok_s: float, ttft: float, itl: float, variant: str = "llm_config_1") -> Measurement:
    return Measurement(variant, 4, tok_s, ttft, ttft_ms=ttft, itl_ms=itl)


def test_a_configuration_over_the_ttft_bound_never_wins() -> None:
    bounds = Constraints(max_ttft_ms=500, max_itl_ms=100)
    assert meets(_llm(10, 500, 100), bounds) and not meets(_llm(99, 501, 10), bounds)
    assert not meets(_llm(99, 10, 101), bounds) and not meets(Measurement("x", 1, 99, 10), bounds)  # no ITL known
    # generations per step: more is faster, but past 8 the first token comes too late
    knob = Knob("generate", "max_batch_size", (4, 8, 16, 32), 4)
    scores = {4: _llm(10, 200, 50), 8: _llm(18, 450, 60), 16: _llm(30, 700, 70), 32: _llm(31, 900, 70)}

    def measure(point: Point) -> Measurement:
        size = point[knob.key]
        return Measurement(f"llm_config_{size}", 4, scores[size].throughput, scores[size].p99_ms,
                           ttft_ms=scores[size].ttft_ms, itl_ms=scores[size].itl_ms)

    best, trace = coordinate_descent([knob], measure, budget=10, objective="throughput", constraints=bounds)
    assert best[knob.key] == 8 and len(trace.measured) == 4
    # choosing among what was measured: the fastest two are out of bounds
    from tritonkit.tune.results.measurements import TuneResults

    results = TuneResults("llm", [s for _, s in trace.measured if s is not None])
    assert choose(results, "throughput", bounds, "log").winner.variant == "llm_config_8"
    with pytest.raises(Exception, match="--max-ttft-ms 220 \\(lowest measured: 200.0 ms\\)"):
        choose(results, "throughput", Constraints(max_ttft_ms=100), "log")


def test_the_engine_knobs_and_write_back_entries(starter: Path) -> None:
    project = load_project(starter)
    target = resolve_joint(project, "llm")
    assert target.engine == "generate" and target.followers == ("llm_complete",) and target.decoupled
    knobs = pipeline_knobs((target.engine,), project.models, None)
    by_name = {k.name: k for k in knobs}
    assert by_name["max_batch_size"].values == (4, 8, 16, 32) and by_name["max_batch_size"].default == 16
    assert by_name["kv_cache_bytes"].values == (128 << 20, 256 << 20, 512 << 20)
    assert set(by_name) == {"max_batch_size", "kv_cache_bytes", "threads"}  # it steps itself: no instances, batching
    assert by_name["threads"].default == 0
    configs = {"generate": mc.ModelConfig(name="generate", max_batch_size=16),
               "llm": mc.ModelConfig(name="llm", platform="ensemble", max_batch_size=16),
               "llm_complete": mc.ModelConfig(name="llm_complete", platform="ensemble", max_batch_size=16)}
    for name in ("llm", "llm_complete"):
        configs[name].ensemble_scheduling.step.add(model_name="generate")
    point = {("generate", "max_batch_size"): 4, ("generate", "kv_cache_bytes"): 128 << 20,
             ("generate", "threads"): 1}
    served = point_configs(point, configs, knobs)
    # Triton refuses an ensemble batching more than its step: both ensembles follow the engine down
    assert [served[m].max_batch_size for m in ("generate", "llm", "llm_complete")] == [4, 4, 4]
    assert not served["generate"].HasField("sequence_batching")  # no scheduler made up for it
    assert served["generate"].parameters["kv_cache_bytes"].string_value == str(128 << 20)
    tuned = tuned_models(point, knobs, "llm", project.models, configs, Provenance(date="d", host="h"))
    assert set(tuned) == {"llm", "generate", "llm_complete"}
    generate = tuned["generate"]
    assert generate.max_batch_size == 4 and generate.parameters == {"intra_op_thread_count": 1,
                                                                     "kv_cache_bytes": 128 << 20}
    assert generate.sequence_batching is None and generate.dynamic_batching is None
    assert tuned["llm_complete"].max_batch_size == 4


@pytest.mark.server
def test_tune_llm_joint_writes_a_served_winner(starter: Path) -> None:
    """Budget 3 on the tiny starter: the winner meets both bounds, generate's tuned: carries it with provenance,
    and the rebuilt repository serves it (the loaded config shows the values)."""
    root = starter.parent
    done = run_cli("tune", "llm", "--joint", "--budget", "3", "--concurrency", "4", "--max-tokens", "12",
                   "--knobs", "max_batch_size,kv_cache_bytes", "--max-ttft-ms", "20000", "--max-itl-ms", "10000",
                   "--json", cwd=root, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(done.stdout)
    assert summary["measured"] <= 3 and summary["grid_size"] == 12
    assert summary["constraints"] == {"max_ttft_ms": 20000.0, "max_itl_ms": 10000.0}
    winner, measured = summary["winner"], summary["llm_measurements"]
    assert winner["meets_constraints"] and winner["ttft_p99_ms"] <= 20000 and winner["itl_p99_ms"] <= 10000
    assert len(measured) == summary["measured"] and measured[0]["settings"] == "default"  # the spec's, first
    kept = [n for n in summary["notes"] if n.endswith("the spec's own settings are kept")]
    if kept:   # the search's winner gave way when measured again against the spec's settings (joint_confirm)
        assert summary["winner_settings"] == "default" and winner["configuration"] == measured[0]["configuration"]
    else:      # the search's own pick: within descent's margin of the best measured
        assert winner["tokens_per_s"] >= max(m["tokens_per_s"] for m in measured) / 1.03 - 1e-9
    spec = yaml.safe_load(starter.read_text())
    entry = spec["tuned"]["generate"]
    prov = entry["provenance"]
    assert prov["constraints"] == {"max_ttft_ms": 20000.0, "max_itl_ms": 10000.0}
    assert prov["p99_latency_ms"] <= 20000 and "joint end-to-end search" in prov["notes"][0]
    log = [line for line in done.stderr.splitlines() if line.startswith("[joint ")]
    assert len(log) == summary["measured"] and all("tokens/s, p99 TTFT" in line for line in log)
    budget = entry["parameters"]["kv_cache_bytes"]
    built = Path(summary["repository"]) / "generate" / "config.pbtxt"
    config = text_format.Parse(built.read_text(), mc.ModelConfig())
    assert config.max_batch_size == entry["max_batch_size"]
    assert config.parameters["kv_cache_bytes"].string_value == str(budget)
    from tritonkit.pipelines.llm.tune.stream import text_run
    from tritonkit.serve.server import EmbeddedServer

    with EmbeddedServer(built.parent.parent, work_dir=root / ".tritonkit", startup_timeout=300) as server:
        import tritonclient.grpc as grpcclient

        client = grpcclient.InferenceServerClient(server.grpc_url)
        served = client.get_model_config("generate").config
        assert served.max_batch_size == entry["max_batch_size"]
        assert served.parameters["kv_cache_bytes"].string_value == str(budget)
        assert client.get_model_config("llm").config.max_batch_size <= served.max_batch_size
        run = text_run(server.grpc_url, "llm", ["Hello"], 4)
        assert [len(t) for t in run.tokens] == [4]
