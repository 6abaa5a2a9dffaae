"""`tritonkit build` as a function: spec -> checked plan -> repository, compose file and Dockerfile."""
from dataclasses import dataclass
from pathlib import Path

from tritonkit.export.progress import Progress
from tritonkit.files import write_text_atomically
from tritonkit.gateway import deployment as gateway_deployment
from tritonkit.gateway.image_source import place_image_source
from tritonkit.repository.compose import DOCKERFILE_NAME, render_compose, render_dockerfile
from tritonkit.repository.exports import run_exports
from tritonkit.repository.model_files import model_references, run_model_files
from tritonkit.repository.pipeline_steps import Made, run_pipeline_steps, step_keys
from tritonkit.repository.plan import BuildPlan, make_plan
from tritonkit.repository.writer import reported_write, write_repository
from tritonkit.spec.loader import load_project


@dataclass
class BuildResult:
    """What a build wrote (or would write, for a dry run)."""

    plan: BuildPlan
    repository: Path
    compose: Path
    dockerfile: Path | None
    written: bool
    made: dict[str, dict[str, Made]]   # {pipeline build step: {model: what it made}}, e.g. "graphs", "assets"
    #: {model: {name in its version folder: `model:<other>/<file>`}}: files copied from another model's build
    model_files: dict[str, dict[str, str]]

    def summary(self) -> dict:
        """Machine-readable form for --json."""
        return {
            "spec": str(self.plan.project.spec_path),
            "repository": str(self.repository),
            "compose": str(self.compose),
            "dockerfile": str(self.dockerfile) if self.dockerfile else None,
            "written": self.written,
            "models": [{"name": n, "platform": m.config.platform, "backend": m.config.backend,
                        "max_batch_size": m.config.max_batch_size} for n, m in self.plan.models.items()],
            "exports": {n: {"exporter": r.exporter, "why": r.exporter_reason, "cache_hit": r.cache_hit,
                            "max_errors": r.max_errors, "seconds": r.elapsed_s, "log": str(r.log_path),
                            "tensorrt": r.tensorrt, "quantized": r.quantized} for n, r in self.plan.exports.items()},
            **{step: {n: m.summary for n, m in models.items()} for step, models in self.made.items()},
            "model_files": self.model_files,
            "files": self.plan.files(),
            "pending_exports": sorted(self.plan.pending),
            "warnings": [w.__dict__ for w in self.plan.warnings],
        }


def build(spec_path: Path, out_dir: Path | None = None, compose_path: Path | None = None, dry_run: bool = False,
          progress: Progress | None = None) -> BuildResult:
    """Loads, exports, renders and validates everything first; writes only when all of it passed.

    A dry run writes nothing anywhere, so it runs no export either: exported models stay in
    `plan.pending`, their configs to be derived from the graphs when the build runs for real. Nor does it
    run the pipelines' build steps (`asr: {graph}`, `tts: {assets}`), so their files, and the `model:` files copied
    from other models' builds, are not in its file list (the copies are in `model_files`).
    """
    project = load_project(spec_path)
    repository = (out_dir or project.root / "model_repository").absolute()
    compose = (compose_path or project.root / "docker-compose.yml").absolute()
    made: dict[str, dict[str, Made]] = {key: {} for key in step_keys()}
    if dry_run:
        model_files = model_references(project)
        plan = make_plan(project, pending=frozenset(n for n, spec in project.models.items() if spec.source is not None))
    else:
        made = run_pipeline_steps(project)
        exports = run_exports(project, progress)
        model_files = run_model_files(project)   # after every step that makes files: they are copied as built
        plan = make_plan(project, exports)
    dockerfile_text = render_dockerfile(plan)
    dockerfile = compose.parent / DOCKERFILE_NAME if dockerfile_text else None
    if not dry_run:
        compose_text = render_compose(plan, repository, compose)
        gateway = gateway_deployment.dockerfile(project.gateway, project.deploy.user, place_image_source(
            compose.parent)) if project.gateway else None
        with reported_write(repository, "the previous repository is unchanged"):
            write_repository(plan, repository)
        with reported_write(compose, f"the new repository is in place, {compose.name} is the previous one"):
            write_text_atomically(compose, compose_text)
            if dockerfile and dockerfile_text:
                write_text_atomically(dockerfile, dockerfile_text)
            if gateway:   # the compose file's gateway service builds from it
                write_text_atomically(compose.parent / gateway_deployment.DOCKERFILE_NAME, gateway)
    return BuildResult(plan, repository, compose, dockerfile, written=not dry_run, made=made, model_files=model_files)
