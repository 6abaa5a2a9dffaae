"""What `tritonkit tune PIPELINE --joint` searches: every model an ensemble or BLS pipeline runs, found recursively.

Unlike Model Analyzer (at most 4 composing models, no nested ensembles, no BLS inside an ensemble, no decoupled
models), the joint search serves the whole pipeline and measures it end to end, so any nesting is fine; what it
cannot judge is refused here with one line.
"""
from dataclasses import dataclass

from tritonkit.errors import TritonkitError, shown_path
from tritonkit.spec.model import ModelSpec
from tritonkit.spec.project import Project
from tritonkit.tune.target import TuneTarget, is_ensemble, named_model

#: A model holding this parameter is the LLM engine: its worth is tokens/s under TTFT and inter-token bounds.
LLM_ENGINE_PARAMETER = "kv_cache_bytes"
#: What an LLM pipeline is measured with: text in (the fixed prompts), token ids streamed out.
LLM_TEXT_INPUT, LLM_IDS_OUTPUT = "text_input", "output_ids"


@dataclass(frozen=True)
class JointTarget:
    """The pipeline (its top model) and every model it runs, top first; how perf_analyzer must call it."""

    name: str
    kind: str  # "ensemble" or "bls"
    models: tuple[str, ...]
    decoupled: bool
    sequence: bool
    #: The LLM engine the pipeline runs (measured by streaming clients: tokens/s, TTFT, inter-token gaps), and the
    #: other ensembles running it, whose max_batch_size may not exceed the engine's.
    engine: str | None = None
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


def _llm_engine(project: Project, name: str, models: list[str]) -> tuple[str | None, tuple[str, ...]]:
    """The engine among `models` (None: not an LLM pipeline) and the ensembles outside them that run it."""
    engine = next((m for m in models if LLM_ENGINE_PARAMETER in project.models[m].parameters), None)
    if engine is None:
        return None, ()
    spec = project.models[name]
    names = {t.name for t in spec.input}, {t.name for t in spec.output}
    if LLM_TEXT_INPUT not in names[0] or LLM_IDS_OUTPUT not in names[1]:
        raise TritonkitError(shown_path(project.origin(name)), f"models.{name}",
                             f"'{name}' runs the LLM engine '{engine}' but has no {LLM_TEXT_INPUT} input and "
                             f"{LLM_IDS_OUTPUT} output, which the streaming clients measuring it send and read",
                             "tune the pipeline that takes text, e.g. tritonkit tune llm --joint")
    followers = tuple(m for m, s in project.models.items() if m not in models and is_ensemble(s)
                      and engine in _callees(s))
    return engine, followers


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
    engine, followers = _llm_engine(project, name, models)
    policy = spec.model_transaction_policy
    return JointTarget(name, kind, tuple(models), bool(policy and policy.decoupled),
                       spec.sequence_batching is not None, engine, followers)
