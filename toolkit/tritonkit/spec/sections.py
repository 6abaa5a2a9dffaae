"""The pipelines' own sections of a model spec (`asr:`, `tts:`), declared by their plugins, and their old spellings.

A field only one pipeline uses lives in that pipeline's section, so a pipeline brings its fields without an edit
to the schema: `schema.py` adds a field per installed pipeline with a section to `ModelSpec`.
"""
from collections.abc import Iterator

from pydantic import BaseModel

from tritonkit.errors import Problem
from tritonkit.plugin import host
from tritonkit.plugin.contract import Section


def sections(spec: BaseModel) -> Iterator[tuple[str, Section]]:
    """(pipeline name, its section) for every pipeline section a model spec has, in name order."""
    for pipeline in host.by_name():
        section = getattr(spec, pipeline.name, None) if pipeline.section is not None else None
        if section is not None:
            yield pipeline.name, section


def moved_fields(data: object, shown: str) -> list[Problem]:
    """Moves the old spellings of pipeline fields (`asr_graph:`) into their sections, in place; a warning each."""
    models = data.get("models") if isinstance(data, dict) else None
    warnings: list[Problem] = []
    for model, fields in models.items() if isinstance(models, dict) else ():
        for p in host.by_name():
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
