"""The autoscaling signals exist: a real Prometheus (Debian's package) scrapes the embedded Triton the way the
generated manifests ask, and the HPA's adapter rule and KServe's KEDA query, run through Prometheus's HTTP API,
read about zero while idle and a positive queue/compute ratio under load.

No cluster here, so two things stand in for Kubernetes, each built from the generated files: the target
labels its pod service discovery would give the pod (`__meta_kubernetes_*`: annotations, labels, name,
namespace, IP; one target per declared container port), and the relabelling that turns them into a
scrape: the prometheus-community/prometheus chart's `kubernetes-pods` job (the one that honours the
`prometheus.io/*` pod annotations) and, for `--podmonitor`, the job prometheus-operator generates from a
PodMonitor. The adapter's `<<.LabelMatchers>>`/`<<.GroupBy>>` are filled as prometheus-adapter's
`metricsQuery.Build` fills them for a pods metric of one namespace, and each query goes to the Prometheus
URL its generated file names (the adapter chart's url:port+path, KEDA's serverAddress).
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
MONITORED_POD = "classifier-6d8f9c7b5-m4n7p"  # another pod of the Deployment, found through the PodMonitor
LOAD_SECONDS = 20.0  # the load runs at most this long; the queries must turn positive within it


def sd_labels(annotations: dict[str, str], pod_labels: dict[str, str], pod: str) -> dict[str, str]:
    """The `__meta_kubernetes_pod_*` labels Kubernetes pod discovery gives a running pod on 127.0.0.1 (label
    names sanitized as it does: every character outside [a-zA-Z0-9_] becomes `_`)."""
    def name(text: str) -> str:
        return re.sub(r"[^a-zA-Z0-9_]", "_", text)

    return {**{f"__meta_kubernetes_pod_annotation_{name(k)}": v for k, v in annotations.items()},
            **{f"__meta_kubernetes_pod_annotationpresent_{name(k)}": "true" for k in annotations},
            **{f"__meta_kubernetes_pod_label_{name(k)}": v for k, v in pod_labels.items()},
            **{f"__meta_kubernetes_pod_labelpresent_{name(k)}": "true" for k in pod_labels},
            "__meta_kubernetes_namespace": NAMESPACE, "__meta_kubernetes_pod_name": pod,
            "__meta_kubernetes_pod_ip": "127.0.0.1", "__meta_kubernetes_pod_phase": "Running"}


#: The prometheus-community/prometheus chart's `kubernetes-pods` relabelling (IPv4 address rule; no scheme,
#: params or slow-scrape annotations are written by tritonkit).
KUBERNETES_PODS_RELABEL = [
    {"source_labels": ["__meta_kubernetes_pod_annotation_prometheus_io_scrape"], "action": "keep", "regex": "true"},
    {"source_labels": ["__meta_kubernetes_pod_annotation_prometheus_io_path"], "action": "replace",
     "target_label": "__metrics_path__", "regex": "(.+)"},
    {"source_labels": ["__meta_kubernetes_pod_annotation_prometheus_io_port", "__meta_kubernetes_pod_ip"],
     "action": "replace",
     "regex": r"(\d+);((([0-9]+?)(\.|$)){4})", "replacement": "$2:$1", "target_label": "__address__"},
    {"action": "labelmap", "regex": "__meta_kubernetes_pod_label_(.+)"},
    {"source_labels": ["__meta_kubernetes_namespace"], "action": "replace", "target_label": "namespace"},
    {"source_labels": ["__meta_kubernetes_pod_name"], "action": "replace", "target_label": "pod"},
    {"source_labels": ["__meta_kubernetes_pod_phase"], "regex": "Pending|Succeeded|Failed|Completed", "action": "drop"},
]


def discovered(pod: str, annotations: dict[str, str], pod_labels: dict[str, str],
               ports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The pod as Kubernetes pod discovery lists it: one target per declared container port."""
    return [{"targets": [f"127.0.0.1:{p['containerPort']}"],
             "labels": {**sd_labels(annotations, pod_labels, pod), "__meta_kubernetes_pod_container_name": "triton",
                        "__meta_kubernetes_pod_container_port_name": p["name"],
                        "__meta_kubernetes_pod_container_port_number": str(p["containerPort"])}}
            for p in ports]


def annotations_job(job: str, targets: list[dict[str, Any]]) -> dict[str, Any]:
    """The prometheus chart's `kubernetes-pods` job over `targets`."""
    return {"job_name": job, "honor_labels": True, "static_configs": targets,
            "relabel_configs": KUBERNETES_PODS_RELABEL}


def podmonitor_job(monitor: dict[str, Any], targets: list[dict[str, Any]]) -> dict[str, Any]:
    """The job prometheus-operator generates for a PodMonitor (selector labels, endpoint port name and path);
    the scrape interval is this test's 1 s, not the PodMonitor's."""
    endpoint = monitor["spec"]["podMetricsEndpoints"][0]
    selector = [
        {
            "action": "keep",
            "source_labels": [
                f"__meta_kubernetes_pod_label_{re.sub(r'[^a-zA-Z0-9_]', '_', k)}",
                f"__meta_kubernetes_pod_labelpresent_{re.sub(r'[^a-zA-Z0-9_]', '_', k)}",
            ],
            "regex": f"({re.escape(v)});true",
        }
        for k, v in monitor["spec"]["selector"]["matchLabels"].items()
    ]
    return {"job_name": f"podMonitor/{NAMESPACE}/{monitor['metadata']['name']}/0", "honor_labels": False,
            "metrics_path": endpoint["path"], "static_configs": targets,
            "relabel_configs": [*selector,
                                {"action": "drop", "source_labels": ["__meta_kubernetes_pod_phase"],
                                 "regex": "(Failed|Succeeded)"},
                                {"action": "keep", "source_labels": ["__meta_kubernetes_pod_container_port_name"],
                                 "regex": endpoint["port"]},
                                {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
                                {"source_labels": ["__meta_kubernetes_pod_container_name"],
                                 "target_label": "container"},
                                {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
                                {"target_label": "job", "replacement": f"{NAMESPACE}/{monitor['metadata']['name']}"},
                                {"target_label": "endpoint", "replacement": endpoint["port"]}]}


def adapter_url(values: dict[str, Any]) -> str:
    """The --prometheus-url the prometheus-adapter chart passes: url, `:port` when set, then path."""
    p = values["prometheus"]
    return f"{p['url']}{':' + str(p['port']) if p.get('port') else ''}{p.get('path', '')}"


def fill_adapter_query(template: str, series: str, pods: list[str]) -> str:
    """prometheus-adapter's fill for a pods metric in NAMESPACE: `namespace="ns",pod="p"` (`pod=~"p1|p2"` for
    several), grouped by the pod label (pkg/naming/metrics_query.go, Build)."""
    pod_matcher = f'pod="{pods[0]}"' if len(pods) == 1 else f'pod=~"{"|".join(pods)}"'
    filled = (
        template.replace("<<.Series>>", series)
        .replace("<<.LabelMatchers>>", f'namespace="{NAMESPACE}",{pod_matcher}')
        .replace("<<.GroupBy>>", "pod")
    )
    assert "<<" not in filled, filled  # a template field this fill does not know
    return filled


class Prometheus:
    """Debian's prometheus binary on a free loopback port with its own config and data folder."""

    def __init__(self, folder: Path, port: int, jobs: list[dict[str, Any]]) -> None:
        binary = shutil.which("prometheus")
        if binary is None:
            missing("needs Debian's prometheus: apt-get install prometheus")
        config = folder / "prometheus.yml"
        config.write_text(yaml.safe_dump({"global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
                                          "scrape_configs": jobs}))
        self.url = f"http://127.0.0.1:{port}"
        self.log = (folder / "prometheus.log").open("w")
        self.process = subprocess.Popen([str(binary), f"--config.file={config}",
                                         f"--storage.tsdb.path={folder / 'data'}",
                                         f"--web.listen-address=127.0.0.1:{port}"], stdout=self.log,
                                        stderr=subprocess.STDOUT)

    def api(self, path: str, base: str | None = None, **params: str) -> Any:
        """GET /api/v1/`path` of this Prometheus, or of `base` (the same server under the URL a manifest names)."""
        with urllib.request.urlopen(f"{base or self.url}/api/v1/{path}?{urllib.parse.urlencode(params)}",
                                    timeout=10) as answer:
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

    def values(self, query: str, base: str) -> dict[str, float]:
        """The instant vector's values by pod (empty when no series matches yet), asked of `base`."""
        return {
            r["metric"].get("pod", ""): float(r["value"][1]) for r in self.api("query", base, query=query)["result"]
        }

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
    """The running Prometheus, the generated adapter rule and KServe query with the URLs they name, and Triton."""

    prometheus: Prometheus
    rule: dict[str, Any]
    adapter_url: str
    kserve_query: str
    keda_url: str
    triton_url: str
    metrics_port: int


@pytest.fixture(scope="module")
def signals(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Signals]:
    """A classifier deployed (k8s, k8s --podmonitor, kserve) with a free metrics port and --prometheus-url naming the
    test's Prometheus, served by the embedded Triton on exactly that port, scraped as the three outputs ask."""
    from tritonkit.serve.ports import choose_ports
    from tritonkit.serve.server import EmbeddedServer

    root = tmp_path_factory.mktemp("signals")
    with socket.socket() as held:  # Prometheus's port, held while Triton's three are picked so none coincide
        held.bind(("127.0.0.1", 0))
        ports = {**choose_ports("127.0.0.1", {"http": None, "grpc": None, "metrics": None}),
                 "prometheus": held.getsockname()[1]}

    def metrics_port(spec: dict[str, Any]) -> None:
        spec.setdefault("deploy", {})["metrics_port"] = ports["metrics"]

    project = init_and_build(root, "classifier", metrics_port)
    url = f"http://127.0.0.1:{ports['prometheus']}"
    for target, flags in (("k8s", ()), ("k8s", ("--podmonitor", "--out", "deploy/k8s-monitored")), ("kserve", ())):
        done = deploy(project, target, "--repository", S3, "--prometheus-url", url, *flags)
        assert done.returncode == 0, done.stderr
    k8s, kserve = documents(project / "deploy" / "k8s"), documents(project / "deploy" / "kserve")
    monitored = documents(project / "deploy" / "k8s-monitored")
    template, runtime = k8s["Deployment"]["spec"]["template"], kserve["ServingRuntime"]["spec"]
    kserve_labels = {**kserve["InferenceService"]["metadata"]["labels"],
                     "serving.kserve.io/inferenceservice": "classifier", "component": "predictor"}
    no_annotations: dict[str, str] = {}  # the PodMonitor pod's annotations are not what finds it
    jobs = [annotations_job("k8s",
                            discovered(K8S_POD, template["metadata"]["annotations"], template["metadata"]["labels"],
                                              containers(k8s)[0]["ports"])),
            # KServe copies the ServingRuntime's spec.annotations onto the predictor pods
            annotations_job("kserve",
                            discovered(KSERVE_POD, runtime["annotations"], kserve_labels,
                                       runtime["containers"][0]["ports"])),
            podmonitor_job(monitored["PodMonitor"],
                           discovered(MONITORED_POD, no_annotations,
                                      monitored["Deployment"]["spec"]["template"]["metadata"]["labels"],
                                                               containers(monitored)[0]["ports"]))]
    values = yaml.safe_load((project / "deploy" / "k8s" / "prometheus-adapter-values.yaml").read_text())
    metric = kserve["InferenceService"]["spec"]["predictor"]["autoScaling"]["metrics"][0]["external"]["metric"]

    server = EmbeddedServer(project / "model_repository", http_port=ports["http"], grpc_port=ports["grpc"],
                            metrics_port=ports["metrics"], work_dir=root / ".tritonkit")
    server.start()
    try:
        prometheus = Prometheus(root, ports["prometheus"], jobs)
        try:
            prometheus.wait_ready()
            yield Signals(prometheus, values["rules"]["custom"][0], adapter_url(values), metric["query"],
                          metric["serverAddress"],
                          server.http_url, ports["metrics"])
        finally:
            prometheus.stop()
    finally:
        server.stop()


def test_every_scrape_reaches_tritons_metrics_port_with_namespace_and_pod(signals: Signals) -> None:
    prometheus = signals.prometheus
    targets = poll(lambda: prometheus.api("targets")["activeTargets"],
                   lambda t: len(t) == 3 and all(x["health"] == "up" for x in t), 30)
    assert {(t["labels"]["pod"], t["labels"]["namespace"], t["health"]) for t in targets} == {
        (K8S_POD, NAMESPACE, "up"), (MONITORED_POD, NAMESPACE, "up"), (KSERVE_POD, NAMESPACE, "up")}, targets
    assert {t["scrapeUrl"] for t in targets} == {
        f"http://127.0.0.1:{signals.metrics_port}/metrics"
    }  # one per pod, not per port
    dropped = prometheus.api("targets", state="dropped")["droppedTargets"]
    assert sorted(
        t["discoveredLabels"]["__meta_kubernetes_pod_container_port_name"]
        for t in dropped
        if t["discoveredLabels"]["job"].startswith("podMonitor/")
    ) == ["grpc", "http"]  # the PodMonitor keeps the metrics port only
    series = poll(lambda: prometheus.api("series", **{"match[]": signals.rule["seriesQuery"]}),
                  lambda s: len({x["pod"] for x in s}) == 3, 30)
    assert {s["pod"] for s in series} == {K8S_POD, MONITORED_POD, KSERVE_POD}
    assert {s["__name__"] for s in series} == {"nv_inference_queue_duration_us"}


def test_hpa_and_kserve_queries_read_zero_idle_and_positive_under_load(signals: Signals) -> None:
    prometheus = signals.prometheus
    assert (
        signals.adapter_url == signals.keda_url == prometheus.url
    )  # the URL --prometheus-url gave, as each consumer reads it
    hpa_query = fill_adapter_query(signals.rule["metricsQuery"], "nv_inference_queue_duration_us",
                                   [K8S_POD, MONITORED_POD])
    assert f'namespace="ml",pod=~"{K8S_POD}|{MONITORED_POD}"' in hpa_query and "by (pod)" in hpa_query
    queries = {"hpa": (hpa_query, signals.adapter_url, {K8S_POD, MONITORED_POD}),
               "kserve": (signals.kserve_query, signals.keda_url, {""})}
    # idle: the series exist (two scrapes inside the 2m rate window) and the ratio is zero
    for query, base, pods in queries.values():
        idle = poll(lambda q=query, b=base: prometheus.values(q, b), lambda v, p=pods: set(v) == p, 30)
        assert set(idle) == pods and all(v == 0.0 for v in idle.values()), (query, idle)
    # under load: every one turns positive while requests queue behind the one classifier instance
    stop = threading.Event()
    answered: list[int] = []
    loader = threading.Thread(target=lambda: answered.append(drive_load(signals.triton_url, stop, LOAD_SECONDS)))
    loader.start()
    try:
        loaded = {name: poll(lambda q=q, b=b: prometheus.values(q, b), lambda v,
                             p=p: set(v) == p and all(x > 0 for x in v.values()), LOAD_SECONDS)
                  for name, (q, b, p) in queries.items()}
    finally:
        stop.set()
        loader.join(timeout=60)
    assert answered and answered[0] > 0
    for name, value in loaded.items():
        assert set(value) == queries[name][2] and all(v > 0 for v in value.values()), (name, value)
