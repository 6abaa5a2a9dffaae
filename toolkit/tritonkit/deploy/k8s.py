"""`tritonkit deploy k8s`: plain manifests plus a kustomization for Triton reading an s3:// repository.

Plain manifests rather than a Helm chart: every file is the object that gets applied, so each one is
checked here against the Kubernetes schemas as written (a chart's Go templates cannot be rendered or
linted without a helm binary, which is not installable on the machines that build and test tritonkit),
and `kubectl apply -k` needs nothing beyond kubectl. Values a chart would expose are flags of this
command; regenerate to change them, or patch with kustomize overlays.
"""
from typing import Any

from tritonkit.deploy import pod
from tritonkit.deploy.manifests import ADAPTER_VALUES, KUSTOMIZATION, Manifest, render
from tritonkit.deploy.scraping import METRICS_PATH, PODMONITOR, adapter_prometheus, scrape_annotations
from tritonkit.deploy.sizing import PROBE_PERIOD_S, mebibytes
from tritonkit.deploy.target import Target
from tritonkit.gateway import deployment as gateway_deployment

#: The custom metric the HPA scales on (the prometheus-adapter rule's `as`).
METRIC = "triton_queue_compute_ratio"
#: The files `kubectl apply -k` applies, in order (the PodMonitor only with --podmonitor); the adapter values
#: go to its own Helm release.
RESOURCES = ["serviceaccount.yaml", "deployment.yaml", "service.yaml", PODMONITOR, "hpa.yaml", "pdb.yaml"]
#: Written only when asked; a run without it removes the one an earlier run generated.
OPTIONAL = (PODMONITOR,)


def selector(t: Target) -> dict[str, str]:
    return {"app.kubernetes.io/name": "triton", "app.kubernetes.io/instance": t.name}


def labels(t: Target) -> dict[str, str]:
    return {**selector(t), "app.kubernetes.io/managed-by": "tritonkit"}


def sizing_note(t: Target) -> str:
    """One line of the numbers the resources came from, for the Deployment's header."""
    models = ", ".join(f"{f.name} {mebibytes(f.file_bytes)}"
                       f"{''.join(f' + {label} {mebibytes(n)}' for label, n in f.held.items())}"
                       f" x{f.cpu_instances} cpu/{f.gpu_instances} gpu"
                       for f in t.footprints if f.cpu_instances or f.gpu_instances)  # ensembles hold nothing
    return f"{models}; shm {mebibytes(t.sizing.shm_bytes)}"


def pod_context(t: Target) -> dict[str, Any]:
    """Template values the Deployment and KServe's ServingRuntime/InferenceService share."""
    volumes, mounts = pod.volumes(t)
    return {
        "spec": t.project.spec_path.name, "name": t.name, "labels": labels(t), "image": t.image, "s3_url": t.s3_url,
        "models": t.models, "s3_secret": t.s3_secret, "irsa_role_arn": t.options.irsa_role_arn,
        "env": pod.env(t), "resources": pod.resources(t), "pod_security": pod.pod_security(t),
        "container_security": pod.container_security(t), "volumes": volumes, "mounts": mounts,
        "sizing_note": sizing_note(t),
        "min_replicas": t.options.min_replicas, "max_replicas": t.options.max_replicas,
        "target_ratio": f"{round(t.options.queue_compute_ratio * 1000)}m",
        "pod_annotations": scrape_annotations(t.project.deploy.metrics_port), "metrics_path": METRICS_PATH,
        "prometheus_url": t.options.prometheus_url, "podmonitor": t.options.podmonitor,
    }


def context(t: Target, out_hint: str) -> dict[str, Any]:
    """Values the templates use; every one is computed here (the templates only lay them out)."""
    deploy = t.project.deploy
    ports = {"http": deploy.http_port, "grpc": deploy.grpc_port, "metrics": deploy.metrics_port}
    return {
        **pod_context(t), "kserve": False, "selector": selector(t), "monitor_selector": selector(t),
        "topology": pod.topology_spread(selector(t)),
        "args": pod.server_args(t, t.s3_url, deploy.http_port, deploy.grpc_port, deploy.metrics_port),
        "ports": [{"name": name, "containerPort": port} for name, port in ports.items()],
        "probes": pod.probes(t, deploy.http_port),
        "startup_window_s": t.sizing.startup_failure_threshold * PROBE_PERIOD_S,
        "load_seconds": t.load_time.seconds, "load_source": t.load_time.source,
        "metric": METRIC, "adapter_file": ADAPTER_VALUES, "out_hint": out_hint,
        "adapter_prometheus": adapter_prometheus(t.options.prometheus_url),
        "gateway": gateway_deployment.sidecar(t.project.gateway, t.name, deploy.grpc_port, t.s3_url,
                                              pod.container_security(t), t.s3_secret, taken=set(ports.values()))
        if t.project.gateway else None,
    }


def resources(t: Target) -> list[str]:
    """The kustomization's files: the PodMonitor only when asked (its CRD must exist in the cluster)."""
    return [f for f in RESOURCES if f != PODMONITOR or t.options.podmonitor]


def manifests(t: Target, out_hint: str) -> list[Manifest]:
    """Every file of the output folder, rendered and parsed (not yet checked or written)."""
    ctx = context(t, out_hint)
    files = [render(f"{f}.j2", f, **ctx) for f in resources(t)]
    files.append(render(f"{KUSTOMIZATION}.j2", KUSTOMIZATION, **{**ctx, "resources": resources(t)}))
    files.append(render(f"{ADAPTER_VALUES}.j2", ADAPTER_VALUES, **ctx))
    return files


def secret_steps(t: Target) -> list[str]:
    """The commands that create the Secrets the pods reference (the S3 keys unless IRSA, the admin key)."""
    s3 = [] if t.s3_secret is None else [
        f"kubectl -n NAMESPACE create secret generic {t.s3_secret} --from-literal=AWS_ACCESS_KEY_ID=... "
        "--from-literal=AWS_SECRET_ACCESS_KEY=... --from-literal=AWS_DEFAULT_REGION=..."]
    admin = '--from-literal=admin-key="$(openssl rand -hex 24)"'
    return [*s3, f"kubectl -n NAMESPACE create secret generic {t.admin_secret} {admin}"]


def next_steps(t: Target, out_hint: str) -> list[str]:
    """What to run after `deploy k8s`: the Secrets, the adapter release, the apply (NAMESPACE left to fill)."""
    return [*secret_steps(t),
            "helm repo add prometheus-community https://prometheus-community.github.io/helm-charts",
            "helm upgrade --install prometheus-adapter prometheus-community/prometheus-adapter -n monitoring"
            f" -f {out_hint}/{ADAPTER_VALUES}",
            f"kubectl apply -k {out_hint} -n NAMESPACE",
            f"kubectl -n NAMESPACE get hpa {t.name}"
            f"   # TARGETS: the queue/compute ratio read through {t.options.prometheus_url}"]
