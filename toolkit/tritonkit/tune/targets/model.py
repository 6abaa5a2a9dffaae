"""What `tritonkit tune NAME` profiles: one model, an ensemble with its steps, or a BLS model with the models it calls.

Model Analyzer profiles an ensemble or BLS pipeline as one top model plus its composing models, in quick
mode only, with at most 4 composing models and no nested ensembles; pipelines beyond that are refused
here with one line instead of failing deep inside Model Analyzer.
"""
from dataclasses import dataclass, field

from tritonkit.errors import TritonkitError
from tritonkit.spec.base import suggest
from tritonkit.spec.loader import shown_path
from tritonkit.spec.model import ModelSpec
from tritonkit.spec.project import Project

#: Model Analyzer's limit on the composing models of one ensemble or BLS pipeline.
MAX_COMPOSING = 4


@dataclass(frozen=True)
class TuneTarget:
    """The top model to profile and, for pipelines, the composing models tuned with it."""

    name: str
    kind: str  # "model", "ensemble" or "bls"
    composing: tuple[str, ...] = field(default_factory=tuple)

    @property
    def models(self) -> tuple[str, ...]:
        """Every model whose settings the run may change, top model first."""
        return (self.name, *self.composing)

    @property
    def is_pipeline(self) -> bool:
        return self.kind != "model"


def is_ensemble(spec: ModelSpec) -> bool:
    return spec.platform == "ensemble" or spec.ensemble_scheduling is not None


def named_model(project: Project, name: str) -> ModelSpec:
    """The spec of the model or pipeline `name`; one line naming the closest names when there is none."""
    if name not in project.models:
        raise TritonkitError(shown_path(project.spec_path), "models", f"no model or pipeline named '{name}'",
                             suggest(name, sorted(project.models)))
    return project.models[name]


def _check_composing(project: Project, top: str, composing: list[str], kind: str) -> None:
    where = shown_path(project.origin(top))
    if len(composing) > MAX_COMPOSING:
        raise TritonkitError(
            where, f"models.{top}",
            f"{kind} pipeline '{top}' has {len(composing)} composing models ({', '.join(composing)}) but "
            f"Model Analyzer profiles at most {MAX_COMPOSING}",
            "tune its composing models one by one: tritonkit tune MODEL",
        )
    nested = [m for m in composing if is_ensemble(project.models[m])]
    if nested:
        raise TritonkitError(
            where, f"models.{top}",
            f"{kind} pipeline '{top}' contains the ensemble '{nested[0]}' "
            "and Model Analyzer does not profile nested ensembles",
            f"tune '{nested[0]}' on its own: tritonkit tune {nested[0]}",
        )


def _check_tunable(project: Project, name: str) -> None:
    spec = project.models[name]
    where = shown_path(project.origin(name))
    if spec.sequence_batching is not None:
        raise TritonkitError(where, f"models.{name}.sequence_batching",
                             f"model '{name}' uses sequence batching, which tritonkit tune does not search",
                             "tune a stateless model, or set instance counts for this one by hand")
    if spec.model_transaction_policy is not None and spec.model_transaction_policy.decoupled:
        raise TritonkitError(where, f"models.{name}.model_transaction_policy",
                             f"model '{name}' is decoupled (streaming), which tritonkit tune does not profile",
                             "tune the models it calls, or measure it with tritonkit perf")


def resolve_target(project: Project, name: str) -> TuneTarget:
    """The model or pipeline called `name`, checked against what Model Analyzer can profile."""
    spec = named_model(project, name)
    if is_ensemble(spec):
        steps = [s.model_name for s in spec.ensemble_scheduling.step] if spec.ensemble_scheduling else []
        composing = list(dict.fromkeys(steps))
        missing = [m for m in composing if m not in project.models]
        if missing:
            raise TritonkitError(shown_path(project.origin(name)), f"models.{name}.ensemble_scheduling",
                                 f"step model '{missing[0]}' is not defined in the spec",
                                 "define it, or fix the step's model_name")
        _check_composing(project, name, composing, "ensemble")
        for model in composing:
            _check_tunable(project, model)
        return TuneTarget(name, "ensemble", tuple(composing))
    _check_tunable(project, name)
    callees = spec.bls.calls if spec.bls is not None else []
    if callees:
        _check_composing(project, name, callees, "BLS")
        for model in callees:
            _check_tunable(project, model)
        return TuneTarget(name, "bls", tuple(callees))
    return TuneTarget(name, "model")

