"""How Prometheus finds Triton's metrics in the generated manifests, and where the autoscalers find Prometheus.

Two scrape paths, the two that clusters run:
- pod annotations `prometheus.io/scrape|port|path`, honoured by the `kubernetes-pods` job of the
  prometheus-community/prometheus chart (and most hand-written configs); always written, so a plain
  `kubectl apply -k` needs no custom resource;
- a PodMonitor for prometheus-operator (kube-prometheus-stack), written only with `--podmonitor`: its CRD
  must exist, or `kubectl apply -k` fails.
Both give every series the `namespace` and `pod` labels the autoscaling queries select on.
"""
from typing import Any
from urllib.parse import urlsplit

METRICS_PATH = "/metrics"
PODMONITOR = "podmonitor.yaml"


def scrape_annotations(metrics_port: int) -> dict[str, str]:
    """The pod annotations a `kubernetes-pods` scrape job keeps and rewrites the target by (values are strings)."""
    return {"prometheus.io/scrape": "true", "prometheus.io/port": str(metrics_port), "prometheus.io/path": METRICS_PATH}


def adapter_prometheus(url: str) -> dict[str, Any]:
    """The prometheus-adapter chart's `prometheus` values for `url`: the chart joins `url`, `:port` and `path`."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return {"url": f"{parts.scheme}://{parts.hostname}", "port": port, "path": parts.path.rstrip("/")}
