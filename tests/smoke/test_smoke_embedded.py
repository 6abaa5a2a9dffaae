"""`tritonkit smoke` against the real embedded Triton: the example passes, and each failure class is caught."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, run_cli
from tritonkit.package_files import package_path
from tritonkit.serve.server import EmbeddedServer
from tritonkit.smoke.runner import run_smoke
from tritonkit.smoke.target import Target

pytestmark = pytest.mark.server
#: The example's classifier code (ensembles/classify.yaml names it as a package file).
STARTER_CLASSIFIER = "pipelines/classifier/starter/models/classifier.py"


def copy_example(dest: Path) -> Path:
    dest.mkdir(parents=True)
    shutil.copy(REPO_ROOT / "tritonkit.yaml", dest)
    for folder in ("ensembles", "models", "examples"):
        shutil.copytree(REPO_ROOT / folder, dest / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def build(project: Path) -> Path:
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    return project / "model_repository"


def smoke(server: EmbeddedServer, repository: Path, *extra: str):
    return run_cli("smoke", "-r", str(repository), "--url", server.http_url, "--grpc-url", server.grpc_url, "--json",
                   *extra)


def failed(report: dict) -> set[tuple[str, str, str]]:
    return {(r["check"], r["model"], r["protocol"]) for r in report["results"] if r["status"] == "fail"}


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory):
    project = copy_example(tmp_path_factory.mktemp("good") / "project")
    repository = build(project)
    with EmbeddedServer(repository, work_dir=project / ".tritonkit") as server:
        yield server, repository


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory):
    """The example with three models sabotaged: wrong numbers, a sequence that forgets, a short stream."""
    project = copy_example(tmp_path_factory.mktemp("broken") / "project")
    classifier = project / "models" / "classifier.py"
    classifier.write_text(
        package_path(STARTER_CLASSIFIER)
        .read_text()
        .replace("BIAS = np.array([0.5, 1.0, -1.5]", "BIAS = np.array([0.5, 1.0, 1.5]")
    )
    pipeline = project / "ensembles" / "classify.yaml"
    pipeline.write_text(pipeline.read_text().replace(f'"tritonkit:{STARTER_CLASSIFIER}"', "../models/classifier.py"))
    accumulator = project / "models" / "accumulator.py"
    accumulator.write_text(
        accumulator.read_text().replace("self.totals[key] = self.totals.get(key, 0) + ", "self.totals[key] = ")
    )
    countdown = project / "models" / "countdown.py"
    countdown.write_text(countdown.read_text().replace("range(n, 0, -1)", "range(n, 1, -1)"))
    repository = build(project)
    with EmbeddedServer(repository, work_dir=project / ".tritonkit") as server:
        yield server, repository


def test_example_passes_over_http_and_grpc(good) -> None:
    server, repository = good
    result = smoke(server, repository)
    assert result.returncode == 0, result.stdout
    report = json.loads(result.stdout)
    assert report["ok"] and not failed(report)
    checks = {(r["check"], r["model"], r["protocol"]) for r in report["results"]}
    for protocol in ("http", "grpc"):
        assert ("sequence:case000", "accumulator", protocol) in checks
        assert ("stream:case000", "countdown", protocol) in checks
        assert ("request:case000", "classify", protocol) in checks
        for negative in ("wrong-dtype", "wrong-shape", "missing-input"):
            assert (f"negative:{negative}", "classifier", protocol) in checks
        assert ("healthy-after-errors", "-", protocol) in checks


def test_table_for_people(good) -> None:
    server, repository = good
    result = run_cli("smoke", "-r", str(repository), "--url", server.http_url, "--grpc-url", server.grpc_url,
                     "--protocol", "grpc")
    assert result.returncode == 0
    assert "PASS" in result.stdout and "FAIL" not in result.stdout
    assert result.stdout.strip().splitlines()[-1].startswith("smoke result: ")


def test_wrong_numbers_forgetful_sequence_and_short_stream_fail(broken) -> None:
    server, repository = broken
    result = smoke(server, repository)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    bad = failed(report)
    for protocol in ("http", "grpc"):
        assert ("request:case000", "classify", protocol) in bad
        assert ("sequence:case000", "accumulator", protocol) in bad
        assert ("stream:case000", "countdown", protocol) in bad
        assert ("request:case000", "preprocess", protocol) not in bad
    detail = next(
        r["detail"] for r in report["results"] if r["check"] == "request:case000" and r["model"] == "classify"
    )
    assert "PROBS" in detail and "max abs error" in detail


def test_served_config_that_differs_from_the_repository_fails(good, tmp_path: Path) -> None:
    server, repository = good
    expected = tmp_path / "expected"
    shutil.copytree(repository, expected)
    config = expected / "preprocess" / "config.pbtxt"
    text = config.read_text()
    start = text.index("dynamic_batching {")
    config.write_text(text[:start] + text[text.index("}", start) + 1:])  # expect no dynamic batching
    report = json.loads(smoke(server, expected, "--protocol", "grpc").stdout)
    assert ("config", "preprocess", "grpc") in failed(report)
    assert ("metadata", "preprocess", "grpc") not in failed(report)


def test_model_missing_on_the_server_fails(good, tmp_path: Path) -> None:
    server, repository = good
    expected = tmp_path / "expected"
    shutil.copytree(repository, expected)
    shutil.copytree(expected / "preprocess", expected / "preprocess_v2")
    config = expected / "preprocess_v2" / "config.pbtxt"
    config.write_text(config.read_text().replace('name: "preprocess"', 'name: "preprocess_v2"'))
    result = smoke(server, expected, "--protocol", "http")
    assert result.returncode == 1
    assert ("ready", "preprocess_v2", "http") in failed(json.loads(result.stdout))


def test_unreachable_server_fails_cleanly(tmp_path: Path, good) -> None:
    _, repository = good
    result = run_cli("smoke", "-r", str(repository), "--url", "127.0.0.1:9", "--grpc-url", "127.0.0.1:9", "--json")
    assert result.returncode == 2
    assert json.loads(result.stdout)["errors"][0]["problem"] == "no server at 127.0.0.1:9 (http)"
    assert result.stderr.strip().splitlines() == [
        "tritonkit smoke: --url: no server at 127.0.0.1:9 (http); start one with `tritonkit serve --background`, "
        "or point --url at a running server"]


def test_served_metadata_that_differs_from_the_repository_fails(good, tmp_path: Path) -> None:
    server, repository = good
    expected = tmp_path / "expected"
    shutil.copytree(repository, expected)
    config = expected / "classifier" / "config.pbtxt"
    config.write_text(config.read_text().replace("dims: [ 3 ]", "dims: [ -1 ]"))
    ensemble = expected / "classify" / "config.pbtxt"
    ensemble.write_text(ensemble.read_text().replace("dims: [ 3 ]", "dims: [ -1 ]"))
    bad = failed(json.loads(smoke(server, expected, "--protocol", "grpc").stdout))
    assert {("config", "classifier", "grpc"), ("metadata", "classifier", "grpc")} <= bad
    assert ("metadata", "preprocess", "grpc") not in bad


def test_tolerance_json_is_read_once_per_golden_folder_and_protocol(good, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not once per case, output, sequence step or streamed response (the exported model has several cases)."""
    server, repository = good
    folders = sorted(p.parent for p in repository.glob("*/golden/tolerance.json"))
    assert folders and any(len(list(f.glob("*.npz"))) > 1 for f in folders)
    reads: list[Path] = []
    real_read_text = Path.read_text

    def counting_read_text(self: Path, *args, **kwargs) -> str:
        if self.name == "tolerance.json":
            reads.append(self.parent)
        return real_read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counting_read_text)
    results = run_smoke(repository, Target(http_url=server.http_url, grpc_url=server.grpc_url), ["http", "grpc"])
    assert not [r for r in results if r.status == "fail"]
    assert sorted(reads) == sorted(folders * 2)


def test_report_has_a_row_per_model_and_every_failure_in_full(broken) -> None:
    server, repository = broken
    report = json.loads(smoke(server, repository).stdout)
    result = run_cli("smoke", "-r", str(repository), "--url", server.http_url, "--grpc-url", server.grpc_url)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    models = {r["model"] for r in report["results"]} - {"-", "tritonkit_smoke_no_such_model"}
    table = lines[:lines.index("")]
    assert table[0].split() == ["model", "result", "passed", "failed", "skipped"]
    assert sorted(line.split()[0] for line in table[1:]) == sorted([*models, "(server)"])
    for summary in report["models"]:  # the JSON gets the same counts, added beside the rows
        rows = [r for r in report["results"] if r["model"] == summary["model"]]
        if rows:
            assert summary["failed"] == sum(r["status"] == "fail" for r in rows)
    classify = next(line.split() for line in table if line.startswith("classify "))
    assert classify[1] == "FAIL" and classify[3] == "2"  # request:case000 over http and grpc
    for row in (r for r in report["results"] if r["status"] == "fail"):
        assert f"FAIL {row['model']} {row['check']} ({row['protocol']}): {row['detail']}" in lines
    assert lines[-1].startswith("smoke result: ") and "PASS" not in result.stdout.split("\n\n")[1]


def test_quiet_prints_only_failures_and_the_total(broken) -> None:
    server, repository = broken
    result = run_cli("smoke", "-r", str(repository), "--url", server.http_url, "--grpc-url", server.grpc_url, "--quiet")
    assert result.returncode == 1
    lines = result.stdout.strip().splitlines()
    assert all(line.startswith("FAIL ") for line in lines[:-1]) and len(lines) == 7  # 3 models x 2 protocols
    assert lines[-1].startswith("smoke result: ") and "checking" not in result.stderr


def test_model_option_checks_only_the_models_named(broken) -> None:
    server, repository = broken
    result = smoke(server, repository, "--model", "preprocess", "--model", "countdown")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["selected_models"] == ["preprocess", "countdown"]
    assert {r["model"] for r in report["results"]} == {"preprocess", "countdown", "-", "tritonkit_smoke_no_such_model"}
    assert failed(report) == {("stream:case000", "countdown", p) for p in ("http", "grpc")}
    passing = smoke(server, repository, "--model", "preprocess")
    assert passing.returncode == 0 and {m["model"] for m in json.loads(passing.stdout)["models"]} == {
        "preprocess",
        "(server)",
    }


def test_model_option_naming_no_model_is_one_line(good) -> None:
    server, repository = good
    result = run_cli("smoke", "-r", str(repository), "--url", server.http_url, "--grpc-url", server.grpc_url,
                     "--model", "nope")
    assert result.returncode == 2 and not result.stdout
    [line] = result.stderr.strip().splitlines()
    names = sorted(p.parent.name for p in repository.glob("*/config.pbtxt"))
    assert line == f"{repository}: --model: no model 'nope' in the repository; name one of: {', '.join(names)}"
