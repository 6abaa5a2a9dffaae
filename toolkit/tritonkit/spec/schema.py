"""The spec's schema with the installed pipelines' parts: their model sections, their sections of a quantized
export and the gateway's pipelines.

`model.py`, `export.py`, `gateway.py` and `project.py` hold the core's classes, which know no pipeline. Here each
gets a subclass of the same name with what the installed pipelines bring (a model's `asr:` section, a quantized
export's `lm:`, the pipelines a gateway model id may name), once per registry; loading, the export child,
`tritonkit schema` and the spec reference read these.
"""
from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from tritonkit.plugin import host
from tritonkit.spec.export import ExportSpec, QuantizeSpec
from tritonkit.spec.gateway import GatewayModelSpec, GatewaySpec
from tritonkit.spec.model import ModelSpec
from tritonkit.spec.project import PipelineFile, ProjectFile


@dataclass(frozen=True)
class SpecSchema:
    """The spec's classes with the installed pipelines' parts."""

    export: type[ExportSpec]
    pipeline_file: type[PipelineFile]
    project_file: type[ProjectFile]
    gateway: type[GatewaySpec]


def spec_schema() -> SpecSchema:
    """The schema for the installed registry."""
    return _schema(host.source())


def _with(base: type[BaseModel], **fields: Any) -> Any:
    """A subclass of `base` named like it, `fields` replacing or added after its own (keeping their places)."""
    return create_model(base.__name__, __base__=base, __module__=base.__module__, __doc__=base.__doc__, **fields)


def _retyped(base: type[BaseModel], name: str, annotation: Any) -> tuple[Any, Any]:
    """`base`'s field `name` with another type: same default and description."""
    return annotation, copy.copy(base.model_fields[name])


@functools.cache
def _schema(source: str) -> SpecSchema:
    pipelines = host.installed()
    sections = {p.name: (p.section | None, Field(default=None, description=f"Fields of the {p.name} pipeline: "
                                                 f"{p.description}."))
                for p in host.by_name() if p.section is not None}
    assert not sections.keys() & ModelSpec.model_fields.keys(), "a pipeline with a section is named like a model field"
    checks = {p.quantize.field: (p.quantize.section | None, Field(default=None, description=p.quantize.description))
              for p in host.by_name() if p.quantize is not None}
    quantize = _with(QuantizeSpec, **checks)
    export = _with(ExportSpec, quantize=_retyped(ExportSpec, "quantize", quantize | None))
    model = _with(ModelSpec, export=_retyped(ModelSpec, "export", export | None), **sections)
    routes = {name: p.gateway for name, p in pipelines.items() if p.gateway is not None}
    defaults = "; ".join(f"{name}: {r.entry_model}{f', {r.entry_note}' if r.entry_note else ''}"
                         for name, r in routes.items())
    gateway_model = _with(GatewayModelSpec, **({"pipeline": (Literal[tuple(routes)], ...)} if routes else {}),
                          model=(str | None, Field(default=None, description="The Triton model it calls; default: the "
                                                   f"pipeline's ({defaults}).")))
    gateway = _with(GatewaySpec, models=(dict[str, gateway_model], Field(  # type: ignore[valid-type]
        default_factory=dict, description="Model id -> pipeline; default: each pipeline Triton serves, as "
        f"{' / '.join(r.default_id for r in routes.values())}.")))
    models = dict[str, model]  # type: ignore[valid-type]
    return SpecSchema(export, _with(PipelineFile, models=_retyped(PipelineFile, "models", models)),
                      _with(ProjectFile, models=_retyped(ProjectFile, "models", models),
                            gateway=_retyped(ProjectFile, "gateway", gateway | None)), gateway)
