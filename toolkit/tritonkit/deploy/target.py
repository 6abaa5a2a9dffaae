"""What a deployment is made from: the spec, its built repository, the published s3:// URL and the flags, all checked.

Every bad value is found here, before anything is rendered, and reported as `file: field: problem; fix`.
"""
import importlib.util
import math
import re
from dataclasses import dataclass
from pathlib import Path

from tritonkit.deploy.load_time import LoadTime, measured_load_time
from tritonkit.deploy.sizing import Footprint, Sizing, footprint, parse_size, size
from tritonkit.errors import Problem, TritonkitError, Where, shown_path
from tritonkit.extras import install_extra
from tritonkit.repository.compose import python_requirements, system_packages
from tritonkit.spec.loader import load_project
from tritonkit.spec.project import Project
from tritonkit.triton.model_graph import with_callees
from tritonkit.triton.s3url import parse_s3_url
from tritonkit.triton.server_args import response_cache_bytes
from tritonkit.validate.repository_check import validate_repository

_S3_URL = re.compile(r"^s3://[A-Za-z0-9][^/\s]*(/\S*)?$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$")
_ROLE_ARN = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]+$")
_HTTP_URL = re.compile(r"^https?://[A-Za-z0-9][-A-Za-z0-9.]*(?::(\d{1,5}))?(/\S*)?$")
_DNS_SUBDOMAIN = re.compile(r"^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_INT32_MAX = 2**31 - 1
#: An image by digest: a name (registry, path, optional tag) and the sha256 of its manifest.
_DIGEST_REFERENCE = re.compile(r"^[a-z0-9][a-z0-9._/:-]*(?<![:/])@sha256:[0-9a-f]{64}$")
#: The Kubernetes version whose schemas manifests are checked against unless `--kubernetes-version` says otherwise.
KUBERNETES_VERSION = "1.34"
#: Import name -> distribution of what the schema checks need: the `deploy` extra.
DEPLOY_EXTRA = {"jsonschema": "jsonschema", "kubernetes_validate": "kubernetes-validate"}
#: The Service of the prometheus-community/prometheus chart installed as `prometheus` in `monitoring`: its
#: `kubernetes-pods` job scrapes pods by their `prometheus.io/*` annotations, the way the manifests ask by default.
DEFAULT_PROMETHEUS_URL = "http://prometheus-server.monitoring.svc:80"


@dataclass(frozen=True)
class Options:
    """The command-line values of `tritonkit deploy k8s|kserve`."""

    spec: Path
    repository_url: str | None
    repository_dir: Path | None = None
    name: str | None = None
    image: str | None = None
    load_seconds: float | None = None
    min_replicas: int = 1
    max_replicas: int = 4
    queue_compute_ratio: float = 0.5
    s3_secret: str | None = None
    irsa_role_arn: str | None = None
    kubernetes_version: str = KUBERNETES_VERSION
    prometheus_url: str = DEFAULT_PROMETHEUS_URL
    podmonitor: bool = False


@dataclass(frozen=True)
class Target:
    """Everything the templates need, checked."""

    project: Project
    options: Options
    name: str
    image: str
    s3_url: str
    models: list[str]  # loaded at startup, in load order (BLS callees included)
    footprints: list[Footprint]
    sizing: Sizing
    load_time: LoadTime
    s3_secret: str | None
    admin_secret: str
    admin_key_env: str
    cache_bytes: int  # --cache-config size; 0 when no model enables the response cache


def default_name(project: Project) -> str:
    """A DNS label from the project folder's name (`My Project` -> `my-project`)."""
    slug = re.sub(r"[^a-z0-9]+", "-", project.root.name.lower()).strip("-")[:40].strip("-")
    return slug or "tritonkit"


def image_problem(image: str, where: Where) -> Problem | None:
    """A Triton image must be pinned: a tag other than `latest`, or a digest (`NAME[:TAG]@sha256:<64 hex>`, passed
    through as written: the one reference that cannot move)."""
    if "@" in image:
        return None if _DIGEST_REFERENCE.match(image) else Problem.at(
            where, f"image {image!r} is not a digest reference",
            "write NAME@sha256:<64 lowercase hex digits>, e.g. the RepoDigests entry `docker inspect` prints")
    if image.rsplit("/", 1)[-1].partition(":")[2] not in ("", "latest"):
        return None
    return Problem.at(where, f"image {image!r} is not pinned",
                      "name a tag or digest, e.g. nvcr.io/nvidia/tritonserver:24.10-py3 or "
                      "nvcr.io/nvidia/tritonserver@sha256:<digest>")


def endpoint_note(repository_url: str) -> str | None:
    """One line when boto3's environment names an S3 endpoint (`AWS_ENDPOINT_URL`, as publish and serve read it) that
    `s3://BUCKET/PREFIX` leaves out of the manifests: Triton reads no endpoint from the environment, so the pods
    would read AWS S3, not that store."""
    url = parse_s3_url(repository_url)
    if url.endpoint is None or url.plain != repository_url.rstrip("/"):
        return None
    return (f"note: --repository {url.plain} names no endpoint, so the pods read AWS S3, not {url.endpoint} (this "
            f"shell's AWS_ENDPOINT_URL, which Triton does not read); for that store pass --repository "
            f"{url.for_triton} with an address the pods reach")


def _numbers_problems(opts: Options) -> list[Problem]:
    """Replica range, load time and target ratio: finite, positive, within what Kubernetes stores (int32 replicas)."""
    problems, low, high = [], opts.min_replicas, opts.max_replicas
    if low < 1 or high < low or high > _INT32_MAX:
        problems.append(Problem("", "--min-replicas", f"{low}..{high} is not a replica range",
                                f"use 1 <= min <= max <= {_INT32_MAX}"))
    if opts.load_seconds is not None and not (math.isfinite(opts.load_seconds) and opts.load_seconds > 0):
        problems.append(Problem("", "--load-seconds", f"{opts.load_seconds} is not a duration",
                                "give the seconds the models take to load, e.g. 120"))
    if not (math.isfinite(opts.queue_compute_ratio) and opts.queue_compute_ratio > 0):
        problems.append(Problem("", "--queue-compute-ratio", f"{opts.queue_compute_ratio} is not a positive number",
                                "e.g. 0.5: scale out when requests queue half as long as they compute"))
    return problems


def _names_problems(opts: Options) -> list[Problem]:
    """URLs, object names and the IAM role: each in the form its consumer accepts."""
    problems, repo = [], opts.repository_url
    if not repo:
        problems.append(Problem("", "--repository", "is missing",
                                "pass the s3:// URL `tritonkit publish` wrote, e.g. --repository s3://bucket/prefix"))
    elif not _S3_URL.match(repo):
        problems.append(Problem("", "--repository", f"{repo!r} is not an s3:// URL",
                                "write s3://bucket/prefix (s3://host:port/bucket/prefix for MinIO)"))
    else:
        try:  # the parser publish and serve use: a port outside 1-65535 in Triton's host:port form
            parse_s3_url(repo)
        except TritonkitError as exc:
            problems += [Problem("", "--repository", f"{repo!r}: {p.problem}", p.fix) for p in exc.problems]
    for option, value, form, what, fix in (
            ("--name", opts.name, _DNS_LABEL, "a Kubernetes name", "use lowercase letters, digits and '-', at most 40"),
            ("--s3-secret", opts.s3_secret, _DNS_SUBDOMAIN, "a Secret name",
             "use lowercase letters, digits, '-' and '.', at most 253"),
            ("--irsa-role-arn", opts.irsa_role_arn, _ROLE_ARN, "an IAM role ARN",
             "e.g. arn:aws:iam::123456789012:role/triton-reader")):
        if value is not None and not form.match(value):
            problems.append(Problem("", option, f"{value!r} is not {what}", fix))
    if opts.s3_secret is not None and opts.irsa_role_arn is not None:
        problems.append(Problem("", "--s3-secret", "is given with --irsa-role-arn",
                                "pick one: a Secret with AWS keys, or an IAM role for the service account"))
    url = _HTTP_URL.match(opts.prometheus_url)
    if url is None or not 1 <= int(url.group(1) or 80) <= 65535:
        problems.append(Problem("", "--prometheus-url",
                                f"{opts.prometheus_url!r} is not an http(s) URL with a port in 1-65535",
                                f"e.g. {DEFAULT_PROMETHEUS_URL}"))
    return problems


def _check_options(project: Project, opts: Options, image: str) -> list[Problem]:
    spec = shown_path(project.spec_path)
    problems = _names_problems(opts) + _numbers_problems(opts)
    needs = ", ".join(python_requirements(project) + system_packages(project))
    if opts.image is None and needs:
        problems.append(Problem(spec, "models.*.requirements",
                                f"the Python models need packages beyond {image} ({needs})",
                                "build tritonkit.Dockerfile (written by tritonkit build), push it "
                                "and pass --image REGISTRY/NAME:TAG"))
    problem = image_problem(image, Where("", "--image") if opts.image else Where(spec, "deploy.image"))
    return problems + ([problem] if problem else [])


def check_installed() -> None:
    """One line naming the missing `deploy` extra, before anything is read (not an ImportError traceback)."""
    missing = [dist for module, dist in DEPLOY_EXTRA.items() if importlib.util.find_spec(module) is None]
    if missing:
        raise TritonkitError("", "", f"needs {', '.join(missing)} to check the manifests",
                             install_extra("deploy"))


def load_target(opts: Options) -> Target:
    """Loads and checks the spec, the built repository and the flags; raises with every problem found."""
    check_installed()
    project = load_project(opts.spec)
    image = opts.image or project.deploy.image
    problems = _check_options(project, opts, image)
    repository = opts.repository_dir or project.root / "model_repository"
    if not (repository / next(iter(project.models)) / "config.pbtxt").is_file():
        problems.append(Problem(shown_path(repository), "", "holds no built repository for this spec",
                                "run tritonkit build first (deploy sizes the pod from the built models)"))
    if problems:
        raise TritonkitError.of(problems)
    configs = validate_repository(repository)
    wanted = project.deploy.load_models or list(project.models)
    models = with_callees(configs, wanted)
    missing = [m for m in wanted if m not in configs]
    if missing:
        raise TritonkitError(shown_path(repository), "", f"has no model {', '.join(missing)}",
                             "run tritonkit build again")
    footprints = [footprint(m, configs[m], repository / m) for m in models]
    load_time = measured_load_time(project.root, opts.load_seconds)
    shm = parse_size(project.deploy.shm_size, Where(shown_path(project.spec_path), "deploy.shm_size"))
    name = opts.name or default_name(project)
    cache = response_cache_bytes(configs.values(), project.deploy.cache_size_bytes)
    return Target(project=project, options=opts, name=name, image=image, s3_url=str(opts.repository_url),
                  models=models, footprints=footprints, sizing=size(footprints, shm, load_time.seconds, cache),
                  load_time=load_time, cache_bytes=cache, admin_key_env=project.deploy.admin_key_env,
                  s3_secret=None if opts.irsa_role_arn else (opts.s3_secret or f"{name}-s3"),
                  admin_secret=f"{name}-admin")
