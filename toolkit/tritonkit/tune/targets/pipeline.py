"""A whole pipeline as the target: every model an ensemble or BLS pipeline runs, found recursively, measured end to
end (`perf.py`, or an engine's streams: `engine.py`).

Unlike Model Analyzer (at most 4 composing models, no nested ensembles, no BLS inside an ensemble, no decoupled
models), the joint search serves the whole pipeline and measures it end to end, so any nesting is fine; what it
cannot judge is refused here with one line.
"""
from dataclasses import dataclass, replace

from tritonkit.errors import TritonkitError, shown_path
from tritonkit.spec.model import ModelSpec
from tritonkit.spec.project import Project
from tritonkit.tune.targets.engine import Engine, engine_of
from tritonkit.tune.targets.model import TuneTarget, is_ensemble, named_model


@dataclass(frozen=True)
class JointTarget:
    """The pipeline (its top model) and every model it runs, top first; how perf_analyzer must call it."""

    name: str
    kind: str  # "ensemble" or "bls"
    models: tuple[str, ...]
    decoupled: bool
    sequence: bool
    #: The engine the pipeline runs (measured by its plugin's streaming clients: tokens/s, TTFT, inter-token gaps),
    #: the pipeline declaring it and what it says of it, and the other ensembles running it, whose max_batch_size
    #: may not exceed the engine's.
    engine: str | None = None
    engine_pipeline: str | None = None
    streams: Engine | None = None
    followers: tuple[str, ...] = ()

    def as_tune_target(self) -> TuneTarget:
        """The form the shared report, plot and write-back code takes (top model plus composing models)."""
        return TuneTarget(self.name, self.kind, self.models[1:])


def _callees(spec: ModelSpec) -> list[str]:
    if spec.ensemble_scheduling is not None:
        return [step.model_name for step in spec.ensemble_scheduling.step]
    return list(spec.bls.calls) if spec.bls is not None else []


def _walk(project: Project, name: str, seen: list[str]) -> None:
    for callee in _callees(project.models[name]):
        if callee in seen:
            continue
        if callee not in project.models:
            raise TritonkitError(shown_path(project.origin(name)), f"models.{name}",
                                 f"'{name}' calls '{callee}', which is not defined in the spec",
                                 "define it, or fix the step's model_name / bls.calls")
        seen.append(callee)
        _walk(project, callee, seen)


def _engine(project: Project, name: str, models: list[str]) -> tuple[str, str, Engine] | None:
    """(engine model, its pipeline, the engine) among `models`; None: the pipeline runs no engine."""
    found = next(((m, *hit) for m in models if (hit := engine_of(project.models[m]))), None)
    if found is None:
        return None
    engine, _, streams = found
    refused = streams.refusal(project.models[name])
    if refused is not None:
        problem, fix = refused
        raise TritonkitError(shown_path(project.origin(name)), f"models.{name}",
                             f"'{name}' runs the {streams.label} engine '{engine}' but {problem}", fix)
    return found


def _followers(project: Project, models: list[str], engine: str) -> tuple[str, ...]:
    """The ensembles outside the pipeline that run its engine."""
    return tuple(m for m, s in project.models.items() if m not in models and is_ensemble(s) and engine in _callees(s))


def resolve_joint(project: Project, name: str) -> JointTarget:
    """The pipeline called `name` with every model it runs; one-line refusals for what cannot be searched."""
    spec = named_model(project, name)
    kind = "ensemble" if is_ensemble(spec) else "bls" if spec.bls is not None and spec.bls.calls else None
    if kind is None:
        raise TritonkitError(shown_path(project.origin(name)), f"models.{name}",
                             f"'{name}' is neither an ensemble nor a BLS model (bls: {{calls: [...]}}), so --joint "
                             "has no pipeline to search", f"tune it alone without --joint: tritonkit tune {name}")
    models = [name]
    _walk(project, name, models)
    found = _engine(project, name, models)
    policy = spec.model_transaction_policy
    decoupled = bool(policy and policy.decoupled)
    target = JointTarget(name, kind, tuple(models), decoupled, spec.sequence_batching is not None)
    if found is None:
        return target
    engine, pipeline, streams = found
    return replace(target, engine=engine, engine_pipeline=pipeline, streams=streams,
                   followers=_followers(project, models, engine))
