"""The pipelines' own sections of a model spec (`asr:`, `tts:`), declared by their plugins, and their old spellings.

A field only one pipeline uses lives in that pipeline's section, so a pipeline brings its fields without an edit
to the schema; `ModelSpec` takes its section fields from the registry (`with_pipeline_sections`).
"""
from collections.abc import Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, Field, create_model

from tritonkit.errors import Problem
from tritonkit.pipelines.registry import PIPELINES, Section
from tritonkit.spec.base import StrictModel

M = TypeVar("M", bound=StrictModel)


def with_pipeline_sections(cls: type[M]) -> type[M]:
    """`cls` with one optional field per pipeline that declares a section, named after it, after its own fields."""
    fields: dict[str, Any] = {
        name: (p.section | None, Field(default=None, description=f"Fields of the {name} pipeline: {p.description}."))
        for name, p in PIPELINES.items() if p.section is not None}
    assert not fields.keys() & cls.model_fields.keys(), "a pipeline with a section is named like a model spec field"
    return create_model(cls.__name__, __base__=cls, __module__=cls.__module__, __doc__=cls.__doc__, **fields)


def sections(spec: BaseModel) -> Iterator[tuple[str, Section]]:
    """(pipeline name, its section) for every pipeline section a model spec has."""
    for name, pipeline in PIPELINES.items():
        section = getattr(spec, name) if pipeline.section is not None else None
        if section is not None:
            yield name, section


def moved_fields(data: object, shown: str) -> list[Problem]:
    """Moves the old spellings of pipeline fields (`asr_graph:`) into their sections, in place; a warning each."""
    models = data.get("models") if isinstance(data, dict) else None
    warnings: list[Problem] = []
    for model, fields in models.items() if isinstance(models, dict) else ():
        for p in PIPELINES.values():
            for old, new in p.old_fields.items():
                if _moved(fields, old, p.name, new):
                    warnings.append(Problem(shown, f"models.{model}.{old}", f"'{old}' is the old spelling of "
                                            f"'{p.name}.{new}' (read as that)",
                                            f"write {p.name}: {{{new}: ...}}"))
    return warnings


def _moved(fields: object, old: str, section: str, new: str) -> bool:
    """Moves `fields[old]` to `fields[section][new]` (a null is dropped); not when that is taken (the schema
    then refuses `old`)."""
    if not isinstance(fields, dict) or old not in fields:
        return False
    target = {} if fields.get(section) is None else fields[section]
    if not isinstance(target, dict) or new in target:
        return False
    if (value := fields.pop(old)) is not None:
        fields[section] = {**target, new: value}
    return True
