"""Renders `templates/deploy/*.yaml.j2`, parses and schema-checks every document, then writes all files or none."""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
import yaml

from tritonkit.deploy.schema_check import check_adapter_rules, check_manifest, kubernetes_version_problem
from tritonkit.errors import Problem, TritonkitError, shown_path
from tritonkit.files import write_text_atomically
from tritonkit.render.model_config import template_environment

#: A file that is not a Kubernetes object and the check that applies to it instead.
ADAPTER_VALUES = "prometheus-adapter-values.yaml"
KUSTOMIZATION = "kustomization.yaml"
#: Manifests are shared with kubectl, CI jobs and other users: readable by all, as a plain `open()` would make them.
FILE_MODE = 0o644


@dataclass(frozen=True)
class Manifest:
    """One generated file: its name in the output folder, its text and the YAML documents it holds."""

    file: str
    text: str
    documents: list[Any]


def _block(value: Any, indent: int) -> str:
    """`value` as block YAML on the following lines, each indented by `indent` spaces."""
    text = yaml.safe_dump(value, sort_keys=False, default_flow_style=False, width=1000)
    return "".join("\n" + " " * indent + line for line in text.splitlines())


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The project's template environment (StrictUndefined) with two YAML filters: `json` scalars, `block` structures."""
    env = template_environment().overlay()
    env.filters["json"] = lambda v: json.dumps(v, ensure_ascii=False)
    env.filters["block"] = _block
    return env


def render(template: str, file: str, **context: Any) -> Manifest:
    """`templates/deploy/<template>` rendered and parsed back (a template that yields bad YAML fails here)."""
    text = environment().get_template(f"deploy/{template}").render(**context)
    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        raise TritonkitError(file, "", f"rendered YAML does not parse: {exc}", "this is a tritonkit template bug") from None
    return Manifest(file, text, documents)


def check(manifests: list[Manifest], kubernetes_version: str) -> list[Problem]:
    """Schema problems of every document: Kubernetes objects by kind, the adapter values by the adapter's rule schema."""
    version = kubernetes_version_problem(kubernetes_version)
    if version is not None:
        return [version]
    problems: list[Problem] = []
    for m in manifests:
        for doc in m.documents:
            if m.file == ADAPTER_VALUES:
                problems += check_adapter_rules(doc.get("rules", {}).get("custom"), m.file)
            elif m.file != KUSTOMIZATION:
                problems += check_manifest(doc, m.file, kubernetes_version)
    return problems


def write(out_dir: Path, manifests: list[Manifest], kubernetes_version: str) -> list[Path]:
    """Checks every manifest, then writes them (each atomically); nothing is written when any check fails."""
    problems = check(manifests, kubernetes_version)
    if problems:
        raise TritonkitError.of(problems)
    if out_dir.exists() and not out_dir.is_dir():
        raise TritonkitError(shown_path(out_dir), "", "is a file", "pass a folder with --out")
    written = []
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for m in manifests:
            path = out_dir / m.file
            write_text_atomically(path, m.text, mode=FILE_MODE)
            written.append(path)
    except OSError as exc:  # a path through a file, a read-only or full filesystem
        raise TritonkitError(shown_path(out_dir), "", f"cannot be written ({exc.strerror or exc})", "pass a writable folder with --out") from None
    return written
