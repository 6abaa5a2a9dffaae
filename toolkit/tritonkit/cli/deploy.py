"""`tritonkit deploy k8s|kserve`: manifests for Triton serving a published s3:// repository, sized and
schema-checked."""
from pathlib import Path
from typing import Any

import click

from tritonkit.cli.output import emit_json, json_option, options, reports_errors, spec_option
from tritonkit.cli.paths import LocalFolder
from tritonkit.deploy.target import DEFAULT_PROMETHEUS_URL, KUBERNETES_VERSION, Options, endpoint_note, load_target
from tritonkit.errors import shown_path

#: The options both targets share.
_common = options(
    spec_option,
    click.option("--repository", "repository_url", metavar="S3_URL", help="The s3:// repository `tritonkit "
                 "publish` wrote (required)."),
    click.option("--repository-dir", type=LocalFolder(), help="The built repository to size from [default: "
                 "model_repository next to the spec]."),
    click.option("--out", "out", type=click.Path(path_type=Path), help="Output folder [default: "
                 "deploy/<target> next to the spec]."),
    click.option("--name", help="Name of the Kubernetes objects [default: the project folder's name]."),
    click.option("--image", help="Triton image, pinned by tag or by digest (NAME@sha256:DIGEST, written into the "
                 "manifests as given) [default: the spec's deploy.image]."),
    click.option("--load-seconds", type=float, help="Model load time for the startup probe [default: measured by "
                 "the last tritonkit serve]."),
    click.option("--min-replicas", type=int, default=1, show_default=True),
    click.option("--max-replicas", type=int, default=4, show_default=True),
    click.option("--queue-compute-ratio", type=float, default=0.5, show_default=True,
                 help="Scale out above this queue time per compute time."),
    click.option("--s3-secret", help="Secret with AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY [default: <name>-s3]."),
    click.option("--irsa-role-arn",
                 help="IAM role for the service account (EKS IRSA) instead of an S3 key Secret."),
    click.option("--kubernetes-version", default=KUBERNETES_VERSION, show_default=True,
                 help="Schemas the manifests are checked against."),
    click.option("--prometheus-url", default=DEFAULT_PROMETHEUS_URL, show_default=True,
                 help="Prometheus the autoscaler reads the metric from (the default is the Service of the "
                      "prometheus-community/prometheus chart installed as 'prometheus' in 'monitoring'; "
                      "kube-prometheus-stack: http://prometheus-operated.monitoring.svc:9090)."),
    click.option("--podmonitor", is_flag=True,
                 help="Also write a PodMonitor (needs prometheus-operator's CRDs); pods are always "
                 "annotated prometheus.io/scrape."),
    json_option,
)


def _run(target: str, out: Path | None, as_json: bool, **kwargs: Any) -> None:
    t = load_target(Options(**kwargs))  # first: a missing deploy extra is one line, before the imports below need it
    from tritonkit.deploy import k8s, kserve  # start-up: jinja2 and the manifest schemas, when it writes
    from tritonkit.deploy.manifests import write  # start-up

    module = {"k8s": k8s, "kserve": kserve}[target]
    folder = out or t.project.root / "deploy" / target
    shown = shown_path(folder)
    written = write(folder, module.manifests(t, shown), t.options.kubernetes_version, module.OPTIONAL)
    note = endpoint_note(t.s3_url)
    if as_json:
        emit_json({"ok": True, "target": target, "out": str(folder), "files": [p.name for p in written],
                   "note": note,
                   "models": t.models, "kubernetes_version": t.options.kubernetes_version,
                   "load_seconds": t.load_time.seconds, "load_source": t.load_time.source,
                   "next": module.next_steps(t, shown)})
        return
    click.echo(f"wrote {len(written)} files to {shown} (schema-checked against Kubernetes "
               f"{t.options.kubernetes_version})")
    click.echo(f"startup probe sized from a {t.load_time.seconds:g} s load ({t.load_time.source})")
    if note:
        click.echo(note, err=True)
    click.echo("next (NAMESPACE: yours):")
    for step in module.next_steps(t, shown):
        click.echo(f"  {step}")


@click.group("deploy")
def deploy_command() -> None:
    """Write Kubernetes or KServe manifests that serve the published repository, sized from the spec.

    \b
    Example:
      tritonkit build && tritonkit publish s3://models/prod
      tritonkit deploy k8s --repository s3://models/prod && kubectl apply -k deploy/k8s
    """


@deploy_command.command("k8s")
@_common
@reports_errors
def k8s_command(out: Path | None, as_json: bool, **kwargs: Any) -> None:
    """Deployment, Service, HPA (autoscaling/v2), PDB and kustomization (+ PodMonitor), plus prometheus-adapter values.

    Triton runs in explicit mode on the s3:// repository, loading the spec's models (deploy.load_models,
    BLS callees added). Every file is checked offline against the Kubernetes schemas (kubernetes-validate)
    and the CRD schemas shipped with tritonkit before any is written.

    \b
    Example:
      tritonkit deploy k8s --repository s3://models/prod --max-replicas 8
      tritonkit deploy k8s --repository s3://models/prod --irsa-role-arn arn:aws:iam::123456789012:role/triton --json
    """
    _run("k8s", out, as_json, **kwargs)


@deploy_command.command("kserve")
@_common
@reports_errors
def kserve_command(out: Path | None, as_json: bool, **kwargs: Any) -> None:
    """A pinned Triton ServingRuntime and an InferenceService (RawDeployment, KEDA autoscaling), same sizing and probes.

    \b
    Example:
      tritonkit deploy kserve --repository s3://models/prod && kubectl apply -f deploy/kserve
    """
    _run("kserve", out, as_json, **kwargs)
