"""`tritonkit deploy k8s|kserve` on starters built into temporary folders: schema-valid, sized and safe manifests."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.cli_contract import ERROR_LINE
from tests.conftest import require, run_cli
from tests.deploy.conftest import (
    FAKE_ADMIN_KEY,
    FAKE_SECRET,
    PROMETHEUS_OPERATED,
    S3,
    containers,
    deploy,
    documents,
    init_and_build,
)

require("kubernetes_validate", "pip install tritonkit[deploy]")

@pytest.fixture(scope="module")
def k8s(classifier: Path) -> Path:
    done = deploy(classifier, "k8s", "--repository", S3)
    assert done.returncode == 0, done.stderr
    return classifier / "deploy" / "k8s"


@pytest.fixture(scope="module")
def kserve(classifier: Path) -> Path:
    done = deploy(classifier, "kserve", "--repository", S3)
    assert done.returncode == 0, done.stderr
    return classifier / "deploy" / "kserve"


@pytest.fixture(scope="module")
def monitored(classifier: Path) -> tuple[Path, Path]:
    """Both targets with --podmonitor and a custom --prometheus-url."""
    for target in ("k8s", "kserve"):
        done = deploy(classifier, target, "--repository", S3, "--podmonitor", "--prometheus-url", PROMETHEUS_OPERATED,
                      "--out", f"deploy/{target}-monitored")
        assert done.returncode == 0, done.stderr
    return classifier / "deploy" / "k8s-monitored", classifier / "deploy" / "kserve-monitored"


@pytest.mark.slow  # init, build and deploy through the CLI: seconds each
def test_every_file_passes_the_offline_schemas(k8s: Path, kserve: Path, monitored: tuple[Path, Path]) -> None:
    from tritonkit.deploy.manifests import ADAPTER_VALUES, KUSTOMIZATION, Manifest, check

    folders = [k8s, kserve, *monitored]
    files = [p for folder in folders for p in sorted(folder.glob("*.yaml"))]
    assert {p.name for p in k8s.glob("*.yaml")} == {"serviceaccount.yaml", "deployment.yaml", "service.yaml",
                                                     "hpa.yaml", "pdb.yaml", KUSTOMIZATION, ADAPTER_VALUES}
    assert {p.name for p in monitored[0].glob("*.yaml")} == {p.name for p in k8s.glob("*.yaml")} | {"podmonitor.yaml"}
    assert {p.name for p in kserve.glob("*.yaml")} == {
        "serviceaccount.yaml",
        "servingruntime.yaml",
        "inferenceservice.yaml",
    }
    assert {p.name for p in monitored[1].glob("*.yaml")} == {p.name for p in kserve.glob("*.yaml")} | {
        "podmonitor.yaml"
    }
    manifests = [Manifest(p.name, p.read_text(), list(yaml.safe_load_all(p.read_text()))) for p in files]
    assert check(manifests, "1.34") == []
    for folder in (k8s, monitored[0]):
        kustomization = yaml.safe_load((folder / KUSTOMIZATION).read_text())
        assert sorted(kustomization["resources"]) == sorted(
            p.name for p in folder.glob("*.yaml") if p.name not in (KUSTOMIZATION, ADAPTER_VALUES)
        )


@pytest.mark.slow  # reads the k8s/kserve module fixtures: init, build and deploy through the CLI
def test_the_schema_check_catches_what_kubectl_would_refuse(k8s: Path, monitored: tuple[Path, Path]) -> None:
    """The check is real: an unknown field, a wrong type and an unknown CRD field each fail it."""
    from tritonkit.deploy.schema_check import check_adapter_rules, check_manifest

    deployment = yaml.safe_load((k8s / "deployment.yaml").read_text())
    deployment["spec"]["replicas"] = "two"
    assert check_manifest(deployment, "deployment.yaml")
    service = yaml.safe_load((k8s / "service.yaml").read_text())
    service["spec"]["portz"] = []
    assert "portz" in check_manifest(service, "service.yaml")[0].problem
    monitor = yaml.safe_load((monitored[0] / "podmonitor.yaml").read_text())
    monitor["spec"]["podMetricsEndpoints"][0]["scrapeEvery"] = "15s"
    assert "scrapeEvery" in check_manifest(monitor, "podmonitor.yaml")[0].problem
    rules = yaml.safe_load((k8s / "prometheus-adapter-values.yaml").read_text())["rules"]["custom"]
    del rules[0]["metricsQuery"]
    assert check_adapter_rules(rules, "values")


@pytest.mark.slow  # reads the k8s/kserve module fixtures: init, build and deploy through the CLI
def test_triton_args_explicit_mode_on_s3(k8s: Path) -> None:
    args = containers(documents(k8s))[0]["args"]
    assert f"--model-repository={S3}" in args and "--model-control-mode=explicit" in args
    assert [a for a in args if a.startswith("--load-model=")] == [
        "--load-model=classifier",
        "--load-model=preprocess",
        "--load-model=classify",
    ]
    assert "--http-restricted-api=model-repository:admin-key=$(TRITON_ADMIN_KEY)" in args


@pytest.mark.slow  # reads the k8s/kserve module fixtures: init, build and deploy through the CLI
def test_probes_are_http_gets_on_triton_s_health_endpoints(k8s: Path, kserve: Path) -> None:
    for folder, port in ((k8s, 8000), (kserve, 8080)):
        c = containers(documents(folder))[0]
        assert c["livenessProbe"]["httpGet"] == {"path": "/v2/health/live", "port": port}
        assert c["startupProbe"]["httpGet"] == {"path": "/v2/health/live", "port": port}
        assert c["readinessProbe"]["httpGet"] == {"path": "/v2/health/ready", "port": port}
        assert "exec" not in c["readinessProbe"] and "--strict-readiness=false" in c["args"]


@pytest.mark.slow  # init, build and deploy through the CLI: seconds each
def test_startup_window_comes_from_the_load_time(classifier: Path, tmp_path: Path) -> None:
    out = tmp_path / "slow"
    done = deploy(classifier, "k8s", "--repository", S3, "--load-seconds", "600", "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["load_source"] == "--load-seconds"
    slow = containers(documents(out))[0]["startupProbe"]
    fast = containers(documents(classifier / "deploy" / "k8s"))[0]["startupProbe"]
    assert (
        slow["failureThreshold"] * slow["periodSeconds"] >= 3 * 600 > fast["failureThreshold"] * fast["periodSeconds"]
    )


def test_load_time_is_read_from_a_serve_log(tmp_path: Path) -> None:
    from tritonkit.deploy.load_time import measured_load_time

    logs = tmp_path / ".tritonkit" / "logs"
    logs.mkdir(parents=True)
    (logs / "tritonserver-1.log").write_text('I1130 23:59:58.500000 1 server.cc:1] "start"\n'
                                             'I1201 00:00:05.000000 1 http_server.cc:1] "Started HTTPService at '
                                             '127.0.0.1:8000"\n')
    measured = measured_load_time(tmp_path, None)
    assert measured.seconds == 6.5 and "tritonkit serve" in measured.source
    assert measured_load_time(tmp_path / "none", None).source.startswith("default")


@pytest.mark.slow  # reads the k8s/kserve module fixtures: init, build and deploy through the CLI
def test_hpa_is_autoscaling_v2_on_the_adapter_metric(k8s: Path) -> None:
    from tritonkit.deploy.k8s import METRIC

    hpa = documents(k8s)["HorizontalPodAutoscaler"]
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["metrics"][0]["pods"]["metric"]["name"] == METRIC == "triton_queue_compute_ratio"
    rules = yaml.safe_load((k8s / "prometheus-adapter-values.yaml").read_text())["rules"]
    assert rules["default"] is True and len(rules["custom"]) == 1   # the chart's own rules stay; one is added
    rule = rules["custom"][0]
    assert rule["name"]["as"] == METRIC
    assert (
        "nv_inference_queue_duration_us" in rule["metricsQuery"]
        and "nv_inference_compute_infer_duration_us" in rule["metricsQuery"]
    )


@pytest.mark.slow  # reads the k8s/kserve module fixtures: init, build and deploy through the CLI
def test_adapter_rule_is_namespace_independent(k8s: Path) -> None:
    text = (k8s / "prometheus-adapter-values.yaml").read_text()
    rule = yaml.safe_load(text)["rules"]["custom"][0]
    assert rule["resources"]["overrides"]["namespace"] == {"resource": "namespace"}
    assert rule["metricsQuery"].count("<<.LabelMatchers>>") == 2
    assert not re.search(r'namespace="', rule["metricsQuery"] + rule["seriesQuery"])
    assert all("namespace" not in doc.get("metadata", {}) for doc in documents(k8s).values())


@pytest.mark.slow  # reads the k8s/kserve module fixtures: init, build and deploy through the CLI
def test_images_are_pinned_and_containers_locked_down(k8s: Path, kserve: Path) -> None:
    for folder in (k8s, kserve):
        docs = documents(folder)
        for c in containers(docs):
            image = c["image"]
            assert ":" in image.rsplit("/", 1)[-1] and not image.endswith(":latest"), image
            sc = c["securityContext"]
            assert sc["runAsNonRoot"] is True and sc["runAsUser"] == 1000 and sc["allowPrivilegeEscalation"] is False
            assert sc["readOnlyRootFilesystem"] is True and sc["capabilities"]["drop"] == ["ALL"]
            assert {m["mountPath"] for m in c["volumeMounts"]} == {"/dev/shm", "/tmp"}
    pod = documents(k8s)["Deployment"]["spec"]["template"]["spec"]
    shm = next(v for v in pod["volumes"] if v["name"] == "shm")
    assert shm["emptyDir"] == {"medium": "Memory", "sizeLimit": "1024Mi"}


@pytest.mark.slow  # init, build and deploy through the CLI: seconds each
def test_an_image_by_digest_is_written_as_given(classifier: Path, tmp_path: Path) -> None:
    image = "nvcr.io/nvidia/tritonserver@sha256:" + "0123456789abcdef" * 4
    for target in ("k8s", "kserve"):
        done = deploy(classifier, target, "--repository", S3, "--image", image, "--out", str(tmp_path / target))
        assert done.returncode == 0, done.stderr
        assert containers(documents(tmp_path / target))[0]["image"] == image


@pytest.mark.slow  # reads the k8s/kserve module fixtures: init, build and deploy through the CLI
def test_no_gpu_without_kind_gpu_and_resources_follow_instances(k8s: Path, kserve: Path) -> None:
    for folder in (k8s, kserve):
        text = "".join(p.read_text() for p in folder.glob("*.yaml"))
        assert "nvidia.com/gpu" not in text
    resources = containers(documents(k8s))[0]["resources"]
    # 200m for Triton + 250m for each of the two CPU instances that name no thread count (the ensemble has none)
    assert resources["requests"]["cpu"] == "700m"
    assert resources["requests"]["memory"] == resources["limits"]["memory"]
    assert documents(kserve)["InferenceService"]["spec"]["predictor"]["model"]["resources"] == resources


@pytest.mark.slow  # init, build and deploy through the CLI: seconds each
def test_gpu_limit_exactly_when_an_instance_group_is_kind_gpu(tmp_path: Path) -> None:
    def gpu_classifier(spec: dict[str, Any]) -> None:
        spec["models"]["classifier"]["instance_group"] = [{"kind": "KIND_GPU", "count": 2, "gpus": [0, 1]}]

    project = init_and_build(tmp_path, "classifier", gpu_classifier)
    done = deploy(project, "k8s", "--repository", S3)
    assert done.returncode == 0, done.stderr
    resources = containers(documents(project / "deploy" / "k8s"))[0]["resources"]
    assert resources["limits"]["nvidia.com/gpu"] == 2 and "nvidia.com/gpu" not in resources["requests"]
    assert resources["requests"]["cpu"] == "950m"  # 200m + 250m (preprocess on CPU) + 2 x 250m GPU instances


@pytest.mark.slow  # init, build and deploy through the CLI: seconds each
def test_bls_callees_are_loaded_with_their_caller(tmp_path: Path) -> None:
    def route_only(spec: dict[str, Any]) -> None:
        spec["deploy"] = {"model_control_mode": "explicit", "load_models": ["route"]}

    project = init_and_build(tmp_path, "bls", route_only)
    done = deploy(project, "k8s", "--repository", S3)
    assert done.returncode == 0, done.stderr
    args = containers(documents(project / "deploy" / "k8s"))[0]["args"]
    loaded = {a.split("=", 1)[1] for a in args if a.startswith("--load-model=")}
    assert "route" in loaded and {"double", "negate"} <= loaded


@pytest.mark.slow  # init, build and deploy through the CLI: seconds each
def test_a_model_loaded_later_that_enables_the_response_cache_gets_the_cache(tmp_path: Path) -> None:
    """--cache-config as soon as any model of the repository enables the response cache, also one loaded after startup
    (without the flag Triton 2.51 serves it with the cache silently off); docker-compose.yml follows the same rule."""
    def preprocess_only(spec: dict[str, Any]) -> None:
        spec["deploy"] = {"model_control_mode": "explicit", "load_models": ["preprocess"], "cache_size_bytes": 1048576}
        spec["models"]["classify"]["response_cache"] = {"enable": True}

    project = init_and_build(tmp_path, "classifier", preprocess_only)
    done = deploy(project, "k8s", "--repository", S3)
    assert done.returncode == 0, done.stderr
    args = containers(documents(project / "deploy" / "k8s"))[0]["args"]
    assert [a for a in args if a.startswith("--load-model=")] == ["--load-model=preprocess"]
    assert "--cache-config=local,size=1048576" in args
    assert (
        "--cache-config=local,size=1048576"
        in yaml.safe_load((project / "docker-compose.yml").read_text())["services"]["triton"]["command"]
    )


@pytest.mark.slow  # init, build and deploy through the CLI: seconds each
def test_nothing_secret_in_any_file_or_output(classifier: Path, k8s: Path, kserve: Path) -> None:
    done = deploy(classifier, "k8s", "--repository", S3, "--irsa-role-arn", "arn:aws:iam::123456789012:role/triton",
                  "--out", "deploy/irsa")
    assert done.returncode == 0, done.stderr
    irsa = classifier / "deploy" / "irsa"
    assert documents(irsa)["ServiceAccount"]["metadata"]["annotations"] == {
        "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/triton"
    }
    assert "envFrom" not in containers(documents(irsa))[0]
    assert containers(documents(k8s))[0]["envFrom"] == [{"secretRef": {"name": "classifier-s3"}}]
    for folder in (k8s, kserve, irsa):
        for path in folder.iterdir():
            text = path.read_text()
            assert FAKE_SECRET not in text and FAKE_ADMIN_KEY not in text and "AKIAFAKE" not in text, path
    assert FAKE_SECRET not in done.stdout + done.stderr and FAKE_ADMIN_KEY not in done.stdout + done.stderr


@pytest.mark.slow  # init, build and deploy through the CLI: seconds each
@pytest.mark.parametrize("args, expected", [
    ((), "tritonkit deploy k8s: --repository: is missing; pass the s3:// URL"),
    (("--repository", "https://bucket/prefix"),
     "tritonkit deploy k8s: --repository: 'https://bucket/prefix' is not an s3:// URL"),
    (("--repository", "s3://127.0.0.1:99999/bucket/prefix"),
     "tritonkit deploy k8s: --repository: 's3://127.0.0.1:99999/bucket/prefix': port 99999 is outside 1-65535; write "
     "it as s3://HOST:PORT/BUCKET/PREFIX"),
    (("--repository", S3, "--image", "nvcr.io/nvidia/tritonserver"),
     "tritonkit deploy k8s: --image: image 'nvcr.io/nvidia/tritonserver' is not pinned"),
    (("--repository", S3, "--image", "nvcr.io/nvidia/tritonserver:latest"),
     "tritonkit deploy k8s: --image: image 'nvcr.io/nvidia/tritonserver:latest' is not pinned"),
    (("--repository", S3, "--image", "nvcr.io/nvidia/tritonserver@sha256:24.10"),
     "tritonkit deploy k8s: --image: image 'nvcr.io/nvidia/tritonserver@sha256:24.10' is not a digest reference; "
     "write NAME@sha256:<64 lowercase hex digits>"),
    (("--repository", S3, "--name", "Bad_Name"), "tritonkit deploy k8s: --name: 'Bad_Name' is not a Kubernetes name"),
    (("--repository", S3, "--load-seconds", "nan"), "tritonkit deploy k8s: --load-seconds: nan is not a duration"),
    (("--repository", S3, "--queue-compute-ratio", "inf"),
     "tritonkit deploy k8s: --queue-compute-ratio: inf is not a positive number"),
    (("--repository", S3, "--max-replicas", "3000000000"),
     "tritonkit deploy k8s: --min-replicas: 1..3000000000 is not a replica range"),
    (("--repository", S3, "--prometheus-url", "http://prometheus:99999"),
     "tritonkit deploy k8s: --prometheus-url: 'http://prometheus:99999' is not"),
    (("--repository", S3, "--s3-secret", "AWS_Keys"),
     "tritonkit deploy k8s: --s3-secret: 'AWS_Keys' is not a Secret name"),
    (("--repository", S3, "--kubernetes-version", "1.24"),
     "tritonkit deploy k8s: --kubernetes-version: '1.24' is not a version whose schemas"),
    (("--repository", S3, "--kubernetes-version", "latest"),
     "tritonkit deploy k8s: --kubernetes-version: 'latest' is not a version whose schemas"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(
    classifier: Path, tmp_path: Path, args: tuple[str, ...], expected: str
) -> None:
    out = tmp_path / "out"
    done = deploy(classifier, "k8s", *args, "--out", str(out))
    assert done.returncode == 2
    assert done.stderr.strip().startswith(expected) and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert ERROR_LINE.match(done.stderr.strip()), done.stderr
    assert not out.exists()


@pytest.mark.slow  # init, build and deploy through the CLI: seconds each
def test_unbuilt_project_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "fresh"
    assert run_cli("init", "--pipeline", "classifier", str(project)).returncode == 0
    done = deploy(project, "kserve", "--repository", S3)
    assert done.returncode == 2 and "holds no built repository for this spec; run tritonkit build first" in done.stderr
    assert not (project / "deploy").exists()


@pytest.mark.slow  # init, build and deploy through the CLI: seconds each
def test_system_packages_need_a_custom_image(tmp_path: Path) -> None:
    """A Python model that needs a Debian package cannot run on the stock image: deploy asks for --image."""
    project = init_and_build(tmp_path, "classifier",
                             lambda data: data["models"]["preprocess"].update(system_packages=["libespeak-ng1"]))
    done = deploy(project, "k8s", "--repository", S3)
    assert done.returncode == 2 and "need packages beyond" in done.stderr and "libespeak-ng1" in done.stderr, (
        done.stderr
    )
    assert len(done.stderr.strip().splitlines()) == 1
    assert deploy(project, "k8s", "--repository", S3, "--image", "registry.example/triton-tts:1.0").returncode == 0
