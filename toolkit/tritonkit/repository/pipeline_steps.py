"""Runs the pipelines' build steps (the asr graph, the tts assets) and adds what they made to each model's `files`.

A step runs for every model with its pipeline's section, before exports; the spec's own `files` of the same name win.
"""
from tritonkit.plugin import host
from tritonkit.plugin.contract import Made
from tritonkit.spec.project import Project


def run_pipeline_steps(project: Project) -> dict[str, dict[str, Made]]:
    """{step key: {model: what it made}} for every pipeline with a build step (empty when no model has its section)."""
    made: dict[str, dict[str, Made]] = {}
    for pipeline in host.by_name():
        if pipeline.build is None:
            continue
        made[pipeline.build.key] = {}
        for name, spec in list(project.models.items()):
            section = getattr(spec, pipeline.name)
            if section is None:
                continue
            out = made[pipeline.build.key][name] = pipeline.build.run(name, section, project)
            assert sorted(out.files) == sorted(section.provides()), "`model:` references are checked against provides()"
            files = {**{file: str(path) for file, path in out.files.items()}, **spec.files}
            project.models[name] = type(spec).model_validate({**spec.model_dump(by_alias=True), "files": files})
    return made


def step_keys() -> list[str]:
    """The keys of every pipeline build step, as `build --json` lists them (a dry run runs none)."""
    return [p.build.key for p in host.by_name() if p.build is not None]
