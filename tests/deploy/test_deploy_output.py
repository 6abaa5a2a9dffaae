"""What `tritonkit deploy` writes beyond the manifests' basics: metrics scraping declared, the adapter's Prometheus,
the optional PodMonitor, topology spread, KV-cache memory, file modes, the next commands, and a missing extra in one
line."""
from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.cli_contract import ERROR_LINE
from tests.conftest import REPO_ROOT, require
from tests.deploy.conftest import PROMETHEUS_OPERATED, S3, containers, deploy, documents, init_and_build
from tritonkit.extras import install_extra

pytestmark = pytest.mark.slow  # every test reads what init, build and deploy (CLI children) wrote: tens of seconds

require("kubernetes_validate", "pip install tritonkit[deploy]")


@pytest.fixture(scope="module")
def out(classifier: Path) -> dict[str, Path]:
    """k8s and kserve with the defaults, and both with --podmonitor and another --prometheus-url."""
    folders = {}
    for target in ("k8s", "kserve"):
        for flags, suffix in (((), ""), (("--podmonitor", "--prometheus-url", PROMETHEUS_OPERATED), "-monitored")):
            done = deploy(classifier, target, "--repository", S3, "--out", f"deploy/{target}{suffix}", *flags)
            assert done.returncode == 0, done.stderr
            folders[target + suffix] = classifier / "deploy" / f"{target}{suffix}"
    return folders


def pod_template(docs: dict[str, Any]) -> dict[str, Any]:
    return docs["Deployment"]["spec"]["template"]


def test_deployment_pods_are_annotated_for_scraping_on_the_declared_metrics_port(out: dict[str, Path]) -> None:
    docs = documents(out["k8s"])
    annotations = pod_template(docs)["metadata"]["annotations"]
    ports = {p["name"]: p["containerPort"] for p in containers(docs)[0]["ports"]}
    assert annotations == {"prometheus.io/scrape": "true", "prometheus.io/port": str(ports["metrics"]),
                           "prometheus.io/path": "/metrics"}
    assert f"--metrics-port={ports['metrics']}" in containers(docs)[0]["args"]


def test_kserve_declares_and_scrapes_the_metrics_port(out: dict[str, Path]) -> None:
    docs = documents(out["kserve"])
    runtime = docs["ServingRuntime"]["spec"]
    ports = {p["name"]: p["containerPort"] for p in runtime["containers"][0]["ports"]}
    assert ports == {"http1": 8080, "metrics": 8002}
    assert f"--metrics-port={ports['metrics']}" in runtime["containers"][0]["args"]
    assert runtime["annotations"] == {"prometheus.kserve.io/port": "8002", "prometheus.kserve.io/path": "/metrics",
                                      "prometheus.io/scrape": "true", "prometheus.io/port": "8002",
                                      "prometheus.io/path": "/metrics"}
    isvc = docs["InferenceService"]
    assert isvc["metadata"]["annotations"]["serving.kserve.io/enable-prometheus-scraping"] == "true"
    assert (
        "prometheus-server.monitoring.svc"
        in isvc["spec"]["predictor"]["autoScaling"]["metrics"][0]["external"]["metric"]["serverAddress"]
    )


def test_podmonitor_only_when_asked_and_it_selects_the_pods_metrics_port(out: dict[str, Path]) -> None:
    assert not (out["k8s"] / "podmonitor.yaml").exists() and not (out["kserve"] / "podmonitor.yaml").exists()
    assert "podmonitor.yaml" not in yaml.safe_load((out["k8s"] / "kustomization.yaml").read_text())["resources"]
    assert "podmonitor.yaml" in yaml.safe_load((out["k8s-monitored"] / "kustomization.yaml").read_text())["resources"]
    docs = documents(out["k8s-monitored"])
    monitor = docs["PodMonitor"]["spec"]
    assert monitor["selector"]["matchLabels"].items() <= pod_template(docs)["metadata"]["labels"].items()
    assert monitor["podMetricsEndpoints"][0]["port"] in {p["name"] for p in containers(docs)[0]["ports"]}
    kserve = documents(out["kserve-monitored"])
    assert kserve["PodMonitor"]["spec"]["selector"]["matchLabels"] == {
        "serving.kserve.io/inferenceservice": "classifier",
        "component": "predictor",
    }
    assert kserve["PodMonitor"]["spec"]["podMetricsEndpoints"][0]["port"] == "metrics"


def test_a_run_without_podmonitor_removes_the_one_an_earlier_run_wrote(classifier: Path) -> None:
    """kubectl apply -f deploy/k8s would still apply a left-over podmonitor.yaml (and fail without the operator's
    CRDs)."""
    folder = classifier / "deploy" / "rerun"
    folder.mkdir(parents=True)
    (folder / "mine.yaml").write_text("# a file of the user's\nkind: ConfigMap\n")
    for flags in (("--podmonitor",), ()):
        done = deploy(classifier, "k8s", "--repository", S3, "--out", "deploy/rerun", *flags)
        assert done.returncode == 0, done.stderr
    assert not (folder / "podmonitor.yaml").exists()
    listed = set(yaml.safe_load((folder / "kustomization.yaml").read_text())["resources"]) | {
        "kustomization.yaml",
        "prometheus-adapter-values.yaml",
    }
    assert {p.name for p in folder.iterdir()} == listed | {"mine.yaml"}
    done = deploy(
        classifier, "kserve", "--repository", S3, "--out", "deploy/rerun"
    )  # one folder for both: only optional files go
    assert done.returncode == 0, done.stderr
    assert {p.name for p in folder.iterdir()} == listed | {"mine.yaml", "servingruntime.yaml", "inferenceservice.yaml"}


def test_the_pages_the_manifests_point_at_exist(out: dict[str, Path]) -> None:
    """The manifests' comments point readers at docs pages that exist, never at a README section."""
    text = "".join(p.read_text() for folder in out.values() for p in sorted(folder.iterdir()))
    assert 'README "' not in text
    pages = set(re.findall(r"docs/[\w/.-]+\.md", text))
    assert pages and all((REPO_ROOT / page).is_file() for page in pages), pages
    assert (
        '"Sizing, probes, validation"' in text
        and "## Sizing, probes, validation" in (REPO_ROOT / "docs/commands/deploy.md").read_text()
    )


def test_adapter_values_name_the_prometheus_url(out: dict[str, Path]) -> None:
    default = yaml.safe_load((out["k8s"] / "prometheus-adapter-values.yaml").read_text())["prometheus"]
    assert default == {"url": "http://prometheus-server.monitoring.svc", "port": 80, "path": ""}
    chosen = yaml.safe_load((out["k8s-monitored"] / "prometheus-adapter-values.yaml").read_text())["prometheus"]
    assert chosen == {"url": "http://prometheus-operated.monitoring.svc", "port": 9090, "path": ""}
    isvc = documents(out["kserve-monitored"])["InferenceService"]
    assert (
        isvc["spec"]["predictor"]["autoScaling"]["metrics"][0]["external"]["metric"]["serverAddress"]
        == PROMETHEUS_OPERATED
    )


def test_replicas_spread_over_nodes_and_zones(out: dict[str, Path]) -> None:
    deployment = pod_template(documents(out["k8s"]))
    isvc = documents(out["kserve"])["InferenceService"]["spec"]["predictor"]
    for constraints, pod_labels in ((deployment["spec"]["topologySpreadConstraints"], deployment["metadata"]["labels"]),
                                    (isvc["topologySpreadConstraints"],
                                     {"serving.kserve.io/inferenceservice": "classifier", "component": "predictor"})):
        assert [c["topologyKey"] for c in constraints] == ["kubernetes.io/hostname", "topology.kubernetes.io/zone"]
        for c in constraints:
            assert (
                c["maxSkew"] == 1
                and c["whenUnsatisfiable"] == "ScheduleAnyway"
                and c["matchLabelKeys"] == ["pod-template-hash"]
            )
            assert c["labelSelector"]["matchLabels"].items() <= pod_labels.items()


def test_memory_counts_kv_cache_bytes_per_instance(classifier: Path, tmp_path: Path) -> None:
    def kv_cache(spec: dict[str, Any]) -> None:
        spec["models"]["preprocess"]["parameters"] = {"kv_cache_bytes": str(300 * 1024 * 1024)}
        spec["models"]["preprocess"]["instance_group"] = [{"kind": "KIND_CPU", "count": 2}]

    def two_instances(spec: dict[str, Any]) -> None:
        spec["models"]["preprocess"]["instance_group"] = [{"kind": "KIND_CPU", "count": 2}]

    memory = {}
    for name, edit in (("plain", two_instances), ("kv", kv_cache)):
        project = init_and_build(tmp_path / name, "classifier", edit)
        done = deploy(project, "k8s", "--repository", S3)
        assert done.returncode == 0, done.stderr
        memory[name] = int(
            containers(documents(project / "deploy" / "k8s"))[0]["resources"]["limits"]["memory"].removesuffix("Mi")
        )
    assert memory["kv"] - memory["plain"] == 2 * 300
    assert (
        "preprocess"
        in (project / "deploy" / "k8s" / "deployment.yaml").read_text().split("kv 300Mi")[0].rsplit(",", 1)[-1]
    )


def test_written_files_are_readable_by_all(out: dict[str, Path]) -> None:
    for folder in out.values():
        for path in folder.iterdir():
            assert stat.S_IMODE(path.stat().st_mode) == 0o644, path


def test_next_commands_are_printed_and_json_stays_json(classifier: Path) -> None:
    done = deploy(classifier, "k8s", "--repository", S3, "--out", "deploy/next")
    assert done.returncode == 0, done.stderr
    steps = done.stdout.split("next (NAMESPACE: yours):\n", 1)[1].splitlines()
    assert [s.split()[:2] for s in steps] == [["kubectl", "-n"], ["kubectl", "-n"], ["helm", "repo"],
                                              ["helm", "upgrade"],
                                              ["kubectl", "apply"], ["kubectl", "-n"]]
    assert "create secret generic classifier-s3" in steps[0] and "create secret generic classifier-admin" in steps[1]
    assert (
        steps[3].endswith(" -f deploy/next/prometheus-adapter-values.yaml")
        and steps[4].strip() == "kubectl apply -k deploy/next -n NAMESPACE"
    )
    as_json = deploy(classifier, "kserve", "--repository", S3, "--out", "deploy/next-kserve", "--json",
                     "--irsa-role-arn", "arn:aws:iam::123456789012:role/triton")
    assert as_json.returncode == 0, as_json.stderr
    report = json.loads(as_json.stdout)  # nothing but the JSON object on stdout
    assert report["next"][0].startswith(
        "kubectl -n NAMESPACE create secret generic classifier-admin"
    )  # IRSA: no S3 Secret
    assert report["next"][1] == "kubectl apply -f deploy/next-kserve -n NAMESPACE"


def test_a_bad_prometheus_url_is_one_line(classifier: Path, tmp_path: Path) -> None:
    done = deploy(classifier, "kserve", "--repository", S3, "--prometheus-url", "prometheus:9090", "--out",
                  str(tmp_path / "x"))
    assert done.returncode == 2 and ERROR_LINE.match(done.stderr.strip()), done.stderr
    assert done.stderr.startswith("tritonkit deploy kserve: --prometheus-url: 'prometheus:9090' is not an http(s) URL")
    assert not (tmp_path / "x").exists()


# Without the deploy extra: its modules made unimportable, as in an install without `tritonkit[deploy]`.
WITHOUT_EXTRA = ("import runpy, sys; sys.modules.update(jsonschema=None, kubernetes_validate=None); "
                 "sys.argv[0] = 'tritonkit'; runpy.run_module('tritonkit', run_name='__main__')")


def test_without_the_deploy_extra_help_works_and_a_run_is_one_line(classifier: Path, tmp_path: Path) -> None:
    for command in (["deploy", "--help"], ["deploy", "kserve", "--help"]):
        helped = subprocess.run([sys.executable, "-c", WITHOUT_EXTRA, *command], capture_output=True, text=True,
                                timeout=60)
        assert helped.returncode == 0 and helped.stderr == "" and "Usage: tritonkit deploy" in helped.stdout, (
            helped.stderr
        )
    assert (
        "--prometheus-url" in helped.stdout
        and "http://prometheus-server.monitoring.svc:80" in helped.stdout.replace("\n", " ")
    )
    for target in ("k8s", "kserve"):
        done = subprocess.run([sys.executable, "-c", WITHOUT_EXTRA, "deploy", target, "--repository", S3, "--out",
                               str(tmp_path / target)],
                              cwd=classifier, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and done.stderr.strip() == (
            f"tritonkit deploy {target}: needs jsonschema, kubernetes-validate to check the manifests; "
            f"{install_extra('deploy')}"), done.stderr
        assert not (tmp_path / target).exists()


def test_an_output_folder_that_cannot_be_made_is_one_line(classifier: Path, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    done = deploy(classifier, "k8s", "--repository", S3, "--out", str(tmp_path / "a-file" / "k8s"))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.strip().endswith("a-file/k8s: cannot be written (Not a directory); pass a writable folder with "
                                        "--out")


@pytest.mark.slow  # init, build and deploy through the CLI: seconds each
def test_an_endpoint_only_in_the_environment_is_named_not_silently_dropped(classifier: Path, tmp_path: Path) -> None:
    """Triton reads no endpoint from the environment: `s3://BUCKET/PREFIX` with AWS_ENDPOINT_URL set would send the
    pods to AWS S3; one line says so and gives Triton's form (with that form, or no endpoint, nothing is said)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_ENDPOINT_URL")}

    def run(repository: str, **extra: str) -> subprocess.CompletedProcess[str]:
        out = tmp_path / str(len(list(tmp_path.iterdir())))
        return subprocess.run([sys.executable, "-m", "tritonkit", "deploy", "k8s", "--repository", repository,
                               "--out", str(out)], cwd=classifier, capture_output=True, text=True, timeout=120,
                              env={**env, **extra})

    minio = {"AWS_ENDPOINT_URL": "http://minio.storage.svc:9000"}
    noted = run(S3, **minio)
    assert noted.returncode == 0, noted.stderr
    assert noted.stderr.strip() == (
        f"note: --repository {S3} names no endpoint, so the pods read AWS S3, not http://minio.storage.svc:9000 (this "
        "shell's AWS_ENDPOINT_URL, which Triton does not read); for that store pass --repository "
        f"s3://minio.storage.svc:9000/{S3.removeprefix('s3://')} with an address the pods reach")
    triton_form = f"s3://minio.storage.svc:9000/{S3.removeprefix('s3://')}"
    for quiet in (run(triton_form, **minio), run(S3)):
        assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
