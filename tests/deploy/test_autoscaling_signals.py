"""The autoscaling signals exist: a real Prometheus (Debian's package) scrapes the embedded Triton the way the
generated manifests ask, and the HPA's adapter rule and KServe's KEDA query, run through Prometheus's HTTP API,
read about zero while idle and a positive queue/compute ratio under load.

No cluster here, so two things stand in for Kubernetes, each built from the generated files: the target
labels its pod service discovery would give the pod (`__meta_kubernetes_*`: annotations, labels, name,
namespace, IP; the `__address__` of the first declared port), and the relabelling of the
prometheus-community/prometheus chart's `kubernetes-pods` job, the scrape job that honours the
`prometheus.io/*` pod annotations. The adapter's `<<.LabelMatchers>>`/`<<.GroupBy>>` are filled as
prometheus-adapter's `metricsQuery.Build` fills them for a pods metric of one namespace.
"""
from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from tests.conftest import missing, require
from tests.deploy.conftest import S3, containers, deploy, documents, init_and_build

require("kubernetes_validate", "pip install tritonkit[deploy]")
require("pytriton", "the embedded server: pip install 'tritonkit[serve]'")
httpclient = require("tritonclient.http", "pip install 'tritonclient[all]==2.51.0'")

pytestmark = pytest.mark.server

NAMESPACE = "ml"
K8S_POD = "classifier-6d8f9c7b5-x2x9k"  # a Deployment's pod: <deployment>-<pod-template-hash>-<suffix>
KSERVE_POD = "classifier-predictor-7c9d8b6f4-q8w2z"  # KServe RawDeployment: <isvc>-predictor-<hash>-<suffix>
LOAD_SECONDS = 20.0  # the load runs at most this long; the queries must turn positive within it


def sd_labels(annotations: dict[str, str], pod_labels: dict[str, str], pod: str) -> dict[str, str]:
    """The `__meta_kubernetes_pod_*` labels Kubernetes pod discovery gives a running pod on 127.0.0.1 (label
    names sanitized as it does: every character outside [a-zA-Z0-9_] becomes `_`)."""
    def name(text: str) -> str:
        return re.sub(r"[^a-zA-Z0-9_]", "_", text)

    return {**{f"__meta_kubernetes_pod_annotation_{name(k)}": v for k, v in annotations.items()},
            **{f"__meta_kubernetes_pod_annotationpresent_{name(k)}": "true" for k in annotations},
            **{f"__meta_kubernetes_pod_label_{name(k)}": v for k, v in pod_labels.items()},
            "__meta_kubernetes_namespace": NAMESPACE, "__meta_kubernetes_pod_name": pod,
            "__meta_kubernetes_pod_ip": "127.0.0.1", "__meta_kubernetes_pod_phase": "Running"}


#: The prometheus-community/prometheus chart's `kubernetes-pods` relabelling (IPv4 address rule; no scheme,
#: params or slow-scrape annotations are written by tritonkit).
KUBERNETES_PODS_RELABEL = [
    {"source_labels": ["__meta_kubernetes_pod_annotation_prometheus_io_scrape"], "action": "keep", "regex": "true"},
    {"source_labels": ["__meta_kubernetes_pod_annotation_prometheus_io_path"], "action": "replace", "target_label": "__metrics_path__", "regex": "(.+)"},
    {"source_labels": ["__meta_kubernetes_pod_annotation_prometheus_io_port", "__meta_kubernetes_pod_ip"], "action": "replace",
     "regex": r"(\d+);((([0-9]+?)(\.|$)){4})", "replacement": "$2:$1", "target_label": "__address__"},
    {"action": "labelmap", "regex": "__meta_kubernetes_pod_label_(.+)"},
    {"source_labels": ["__meta_kubernetes_namespace"], "action": "replace", "target_label": "namespace"},
    {"source_labels": ["__meta_kubernetes_pod_name"], "action": "replace", "target_label": "pod"},
    {"source_labels": ["__meta_kubernetes_pod_phase"], "regex": "Pending|Succeeded|Failed|Completed", "action": "drop"},
]


def scrape_job(job: str, pod: str, annotations: dict[str, str], pod_labels: dict[str, str], first_port: int) -> dict[str, Any]:
    """One pod as the `kubernetes-pods` job sees it: discovered at its first declared port, relabelled by its annotations."""
    return {"job_name": job, "honor_labels": True,
            "static_configs": [{"targets": [f"127.0.0.1:{first_port}"], "labels": sd_labels(annotations, pod_labels, pod)}],
            "relabel_configs": KUBERNETES_PODS_RELABEL}


def fill_adapter_query(template: str, series: str, pods: list[str]) -> str:
    """prometheus-adapter's fill for a pods metric in NAMESPACE: `namespace="ns",pod="p"` (`pod=~"p1|p2"` for
    several), grouped by the pod label (pkg/naming/metrics_query.go, Build)."""
    pod_matcher = f'pod="{pods[0]}"' if len(pods) == 1 else f'pod=~"{"|".join(pods)}"'
    filled = (template.replace("<<.Series>>", series).replace("<<.LabelMatchers>>", f'namespace="{NAMESPACE}",{pod_matcher}')
              .replace("<<.GroupBy>>", "pod"))
    assert "<<" not in filled, filled  # a template field this fill does not know
    return filled


class Prometheus:
    """Debian's prometheus binary on a free loopback port with its own config and data folder."""

    def __init__(self, folder: Path, port: int, jobs: list[dict[str, Any]]) -> None:
        binary = shutil.which("prometheus")
        if binary is None:
            missing("needs Debian's prometheus: apt-get install prometheus")
        config = folder / "prometheus.yml"
        config.write_text(yaml.safe_dump({"global": {"scrape_interval": "1s", "scrape_timeout": "1s"}, "scrape_configs": jobs}))
        self.url = f"http://127.0.0.1:{port}"
        self.log = (folder / "prometheus.log").open("w")
        self.process = subprocess.Popen([str(binary), f"--config.file={config}", f"--storage.tsdb.path={folder / 'data'}",
                                         f"--web.listen-address=127.0.0.1:{port}"], stdout=self.log, stderr=subprocess.STDOUT)

    def api(self, path: str, **params: str) -> Any:
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{urllib.parse.urlencode(params)}", timeout=10) as answer:
            body = json.load(answer)
        assert body["status"] == "success", body
        return body["data"]

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, Path(self.log.name).read_text()
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2):
                    return
            except OSError:
                time.sleep(0.3)
        raise AssertionError(f"prometheus not ready: {Path(self.log.name).read_text()[-2000:]}")

    def value(self, query: str) -> list[float]:
        """The instant vector's values (empty when no series matches yet)."""
        return [float(r["value"][1]) for r in self.api("query", query=query)["result"]]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


def poll(read: Any, accept: Any, timeout: float) -> Any:
    """`read()` until `accept(value)` or the timeout; returns the last value either way."""
    deadline = time.monotonic() + timeout
    value = read()
    while not accept(value) and time.monotonic() < deadline:
        time.sleep(0.5)
        value = read()
    return value


def drive_load(url: str, stop: threading.Event, seconds: float) -> int:
    """Keeps 16 requests in flight against `classifier` until `stop` or `seconds`; returns how many were answered."""
    client = httpclient.InferenceServerClient(url, concurrency=16)
    x = np.random.default_rng(0).standard_normal((1, 4)).astype(np.float32)
    done, deadline = 0, time.monotonic() + seconds
    try:
        while not stop.is_set() and time.monotonic() < deadline:
            pending = []
            for _ in range(16):
                inp = httpclient.InferInput("FEATURES", [1, 4], "FP32")
                inp.set_data_from_numpy(x)
                pending.append(client.async_infer("classifier", [inp]))
            for p in pending:
                p.get_result()
                done += 1
    finally:
        client.close()
    return done


@dataclass(frozen=True)
class Signals:
    """The running Prometheus, the generated adapter rule and KServe query, and the Triton they watch."""

    prometheus: Prometheus
    rule: dict[str, Any]
    kserve_query: str
    triton_url: str


@pytest.fixture(scope="module")
def signals(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Signals]:
    """A classifier deployed (k8s and kserve) with a free metrics port, served by the embedded Triton on exactly
    that port, scraped by a real Prometheus through both targets' pod annotations."""
    from tritonkit.serve.ports import choose_ports
    from tritonkit.serve.server import EmbeddedServer

    root = tmp_path_factory.mktemp("signals")
    with socket.socket() as held:  # Prometheus's port, held while Triton's three are picked so none coincide
        held.bind(("127.0.0.1", 0))
        ports = {**choose_ports("127.0.0.1", {"http": None, "grpc": None, "metrics": None}), "prometheus": held.getsockname()[1]}

    def metrics_port(spec: dict[str, Any]) -> None:
        spec.setdefault("deploy", {})["metrics_port"] = ports["metrics"]

    project = init_and_build(root, "classifier", metrics_port)
    for target in ("k8s", "kserve"):
        done = deploy(project, target, "--repository", S3)
        assert done.returncode == 0, done.stderr
    k8s, kserve = documents(project / "deploy" / "k8s"), documents(project / "deploy" / "kserve")
    template = k8s["Deployment"]["spec"]["template"]
    runtime = kserve["ServingRuntime"]["spec"]
    kserve_labels = {**kserve["InferenceService"]["metadata"]["labels"], "serving.kserve.io/inferenceservice": "classifier", "component": "predictor"}
    jobs = [scrape_job("k8s", K8S_POD, template["metadata"]["annotations"], template["metadata"]["labels"],
                       containers(k8s)[0]["ports"][0]["containerPort"]),
            # KServe copies the ServingRuntime's spec.annotations onto the predictor pods
            scrape_job("kserve", KSERVE_POD, runtime["annotations"], kserve_labels, runtime["containers"][0]["ports"][0]["containerPort"])]
    rules = yaml.safe_load((project / "deploy" / "k8s" / "prometheus-adapter-values.yaml").read_text())["rules"]["custom"]
    query = kserve["InferenceService"]["spec"]["predictor"]["autoScaling"]["metrics"][0]["external"]["metric"]["query"]

    server = EmbeddedServer(project / "model_repository", http_port=ports["http"], grpc_port=ports["grpc"],
                            metrics_port=ports["metrics"], work_dir=root / ".tritonkit")
    server.start()
    try:
        prometheus = Prometheus(root, ports["prometheus"], jobs)
        try:
            prometheus.wait_ready()
            yield Signals(prometheus, rules[0], query, server.http_url)
        finally:
            prometheus.stop()
    finally:
        server.stop()


def test_both_scrape_jobs_reach_tritons_metrics_port_with_namespace_and_pod(signals: Signals) -> None:
    prometheus = signals.prometheus
    targets = poll(lambda: prometheus.api("targets")["activeTargets"], lambda t: len(t) == 2 and all(x["health"] == "up" for x in t), 30)
    assert sorted((t["labels"]["job"], t["labels"]["pod"], t["labels"]["namespace"], t["health"]) for t in targets) == [
        ("k8s", K8S_POD, NAMESPACE, "up"), ("kserve", KSERVE_POD, NAMESPACE, "up")], targets
    assert all(t["scrapeUrl"].endswith("/metrics") for t in targets)
    series = poll(lambda: prometheus.api("series", **{"match[]": signals.rule["seriesQuery"]}), lambda s: len(s) >= 2, 30)
    assert {s["pod"] for s in series} == {K8S_POD, KSERVE_POD} and {s["__name__"] for s in series} == {"nv_inference_queue_duration_us"}


def test_hpa_and_kserve_queries_read_zero_idle_and_positive_under_load(signals: Signals) -> None:
    prometheus, kserve_query = signals.prometheus, signals.kserve_query
    hpa_query = fill_adapter_query(signals.rule["metricsQuery"], "nv_inference_queue_duration_us", [K8S_POD])
    assert 'namespace="ml",pod="classifier-6d8f9c7b5-x2x9k"' in hpa_query and "by (pod)" in hpa_query
    # idle: the series exist (two scrapes inside the 2m rate window) and the ratio is zero
    for query in (hpa_query, kserve_query):
        idle = poll(lambda q=query: prometheus.value(q), lambda v: len(v) == 1, 30)
        assert idle == [0.0], (query, idle)
    # under load: both turn positive while requests queue behind the one classifier instance
    stop = threading.Event()
    answered: list[int] = []
    loader = threading.Thread(target=lambda: answered.append(drive_load(signals.triton_url, stop, LOAD_SECONDS)))
    loader.start()
    try:
        loaded = {q: poll(lambda q=q: prometheus.value(q), lambda v: len(v) == 1 and v[0] > 0, LOAD_SECONDS) for q in (hpa_query, kserve_query)}
    finally:
        stop.set()
        loader.join(timeout=60)
    assert answered and answered[0] > 0
    for query, value in loaded.items():
        assert len(value) == 1 and value[0] > 0, (query, value)
