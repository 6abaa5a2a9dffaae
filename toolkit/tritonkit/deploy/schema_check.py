"""Offline schema checks of generated manifests, so a file that `kubectl apply` would refuse is never written.

Core kinds go through `kubernetes-validate` (the Kubernetes JSON schemas of a named version, shipped in the package);
custom resources through their CRDs' published schemas vendored in `schemas/` (see its README for sources and versions).
Both are strict: an unknown field is an error, as with `kubectl apply --validate=strict`.
"""
import gzip
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from tritonkit.deploy.target import KUBERNETES_VERSION
from tritonkit.errors import Problem

SCHEMA_DIR = Path(__file__).parent / "schemas"
#: (apiVersion, kind) of a custom resource -> its vendored CRD schema.
CRD_SCHEMAS = {
    ("monitoring.coreos.com/v1", "PodMonitor"): "podmonitor-monitoring-v1.json.gz",
    ("serving.kserve.io/v1alpha1", "ServingRuntime"): "servingruntime-serving-v1alpha1.json.gz",
    ("serving.kserve.io/v1beta1", "InferenceService"): "inferenceservice-serving-v1beta1.json.gz",
}
ADAPTER_RULES_SCHEMA = "prometheus-adapter-rules.json"
BUG_FIX = "this is a tritonkit bug unless the value came from a flag; nothing was written"


def strict(schema: Any) -> Any:
    """An OpenAPI (CRD) schema with unknown fields refused wherever it lists the fields and does not allow others."""
    if isinstance(schema, list):
        return [strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: strict(value) for key, value in schema.items()}
    open_ended = "additionalProperties" in out or out.get("x-kubernetes-preserve-unknown-fields")
    if "properties" in out and not open_ended:
        out["additionalProperties"] = False
    return out


@cache
def vendored_schema(name: str) -> dict[str, Any]:
    """A schema file from `schemas/` (gzipped CRD schemas are made strict)."""
    path = SCHEMA_DIR / name
    if name.endswith(".gz"):
        return strict(json.loads(gzip.decompress(path.read_bytes())))
    return json.loads(path.read_text())


def _where(error: jsonschema.ValidationError) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "(top level)"


def check_against(schema: dict[str, Any], document: Any, file: str) -> list[Problem]:
    """Every violation of `schema` by `document`, one problem each."""
    validator = jsonschema.Draft7Validator(schema)
    return [Problem(file, _where(e), f"fails its schema: {e.message}", BUG_FIX)
            for e in sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))]


def kubernetes_version_problem(version: str) -> Problem | None:
    """A --kubernetes-version kubernetes-validate ships no schemas for (below its oldest: an IndexError)."""
    import kubernetes_validate.utils as shipped

    def minor(text: str) -> tuple[int, int] | None:
        m = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", text)
        return (int(m[1]), int(m[2])) if m else None

    known = sorted({v for v in map(minor, shipped.all_versions()) if v is not None})
    wanted = minor(version)
    if wanted is not None and known[0] <= wanted <= known[-1]:
        return None
    first, last = (".".join(map(str, v)) for v in (known[0], known[-1]))
    return Problem("", "--kubernetes-version",
                   f"{version!r} is not a version whose schemas kubernetes-validate ships ({first} to {last})",
                   f"pick one from {first} to {last}, e.g. {KUBERNETES_VERSION}")


def check_manifest(document: dict[str, Any], file: str, version: str = KUBERNETES_VERSION) -> list[Problem]:
    """Problems of one Kubernetes object: its CRD schema if it is a custom resource, else the core schema."""
    key = (document.get("apiVersion", ""), document.get("kind", ""))
    if key in CRD_SCHEMAS:
        return check_against(vendored_schema(CRD_SCHEMAS[key]), document, file)
    import kubernetes_validate  # imported here: 20 MB of schemas that only deploy needs

    try:
        kubernetes_validate.validate(document, version, strict=True)
    except kubernetes_validate.ValidationError as exc:  # a jsonschema error: the first violation found
        problem = f"fails the Kubernetes {version} schema of {key[1]}: {exc.message}"
        return [Problem(file, _where(exc), problem, BUG_FIX)]
    except kubernetes_validate.SchemaNotFoundError as exc:  # the version is known (checked before), the kind is not
        return [Problem(file, "apiVersion", f"{exc.message} (kubernetes-validate {kubernetes_validate.__version__})",
                        "pick a --kubernetes-version that kubernetes-validate ships, e.g. 1.34")]
    return []


def check_adapter_rules(rules: Any, file: str) -> list[Problem]:
    """Problems of a prometheus-adapter custom-metrics rule list."""
    return check_against(vendored_schema(ADAPTER_RULES_SCHEMA), rules, file)
