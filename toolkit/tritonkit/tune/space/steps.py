"""A pipeline's steps as knobs (instances, queue delay, preferred sizes, threads, or an engine's own), and a point
written into their configs and back into the spec.

A point is applied to each step's built config.pbtxt (protobuf, as Model Analyzer makes its variants) to serve a
candidate, and mapped back to the spec's `tuned:` overlay through `mapping.tuned_for`, the same code the Model
Analyzer strategy writes back with.
"""
import os
from typing import Any

from tritonkit.spec.model import ModelSpec
from tritonkit.spec.tuned import Provenance, TunedModel
from tritonkit.triton.instance_counts import group_count, instance_groups
from tritonkit.triton.model_config import pb as mc
from tritonkit.tune.options import DELAYS_US
from tritonkit.tune.results.mapping import tuned_for
from tritonkit.tune.space.knobs import Key, Knob, Point, knob_names
from tritonkit.tune.targets.engine import engine_of
from tritonkit.tune.targets.model import is_ensemble

THREADS_PARAMETER = "intra_op_thread_count"


def _has_threads(spec: ModelSpec) -> bool:
    exported = spec.source is not None and spec.backend is None and spec.platform is None  # built as ONNX
    onnx = exported or spec.platform == "onnxruntime_onnx" or spec.backend == "onnxruntime"
    return onnx or THREADS_PARAMETER in spec.parameters


def step_knobs(name: str, spec: ModelSpec, max_instances: int, cores: int,
               delays: tuple[int, ...] = DELAYS_US) -> list[Knob]:
    """The knobs of one step; none for an ensemble, and no instances or batching for a sequence model or an engine
    (their streams' state lives in one instance)."""
    if is_ensemble(spec):
        return []
    engine = engine_of(spec)
    knobs = engine[1].knobs(name, spec, delays) if engine else []
    if spec.sequence_batching is None and not engine:
        if len(spec.instance_group) <= 1:
            count = spec.instance_group[0].count if spec.instance_group and spec.instance_group[0].count else 1
            knobs.append(Knob(name, "instances", tuple(sorted({count, *range(1, max_instances + 1)})), count))
        if spec.max_batch_size > 0:
            db = spec.dynamic_batching
            delay = db.max_queue_delay_microseconds if db is not None else None
            delays_tried = sorted({*delays, *([delay] if delay is not None else [])})
            knobs.append(Knob(name, "queue_delay_us", tuple(([None] if delay is None else []) + delays_tried), delay))
            own = tuple(db.preferred_batch_size) if db is not None else ()
            # no "none" choice when the spec has sizes: the write-back keeps the spec's sizes for an empty list
            knobs.append(Knob(name, "preferred", tuple(dict.fromkeys([own, (spec.max_batch_size,)])), own))
    if _has_threads(spec):
        own_threads = int(spec.parameters.get(THREADS_PARAMETER, 0))
        wanted = {own_threads, 1, cores, *([2] if cores > 2 else [])}
        knobs.append(Knob(name, "threads", tuple(sorted(wanted)), own_threads, THREADS_PARAMETER))
    return [k for k in knobs if len(k.values) > 1]


def pipeline_knobs(models: tuple[str, ...], specs: dict[str, ModelSpec], max_instances: int | None,
                   names: tuple[str, ...] | None = None, delays: tuple[int, ...] = DELAYS_US) -> list[Knob]:
    """Every step's knobs of the kinds in `names` (default: all), in the pipeline's order (a step's instances before
    its batching)."""
    names = names or knob_names()
    cores = os.cpu_count() or 1
    limit = max_instances or max(2, min(4, cores))
    knobs = [knob for name in models for knob in step_knobs(name, specs[name], limit, cores, delays)]
    kept = [knob for knob in knobs if knob.name in names]
    batching = {k.step for k in kept if k.name == "queue_delay_us"} | {
        name for name in models if specs[name].dynamic_batching is not None}
    return [k for k in kept if k.name != "preferred" or k.step in batching]  # sizes need batching on


def parameters(knobs: list[Knob]) -> dict[Key, str]:
    """(step, knob) -> the config parameter it sets, for the knobs written as parameters."""
    return {k.key: k.parameter for k in knobs if k.parameter is not None}


def apply_point(config: mc.ModelConfig, point: Point, step: str, written: dict[Key, str]) -> mc.ModelConfig:
    """A copy of the step's built config with the point's values for that step (`written`: `parameters(knobs)`)."""
    out = mc.ModelConfig()
    out.CopyFrom(config)
    values = {knob: value for (name, knob), value in point.items() if name == step}
    if "instances" in values:
        if not out.instance_group:
            out.instance_group.extend(instance_groups(config))
        out.instance_group[0].count = values["instances"]
    elif out.instance_group:  # written explicitly so the write-back keeps the count Triton would run
        out.instance_group[0].count = group_count(config, out.instance_group[0])
    if "max_batch_size" in values:
        out.max_batch_size = values["max_batch_size"]
    if "max_batch_size" in values and out.HasField("sequence_batching"):
        oldest = out.sequence_batching.oldest
        sizes = list(dict.fromkeys(min(size, out.max_batch_size) for size in oldest.preferred_batch_size))
        del oldest.preferred_batch_size[:]
        oldest.preferred_batch_size.extend(sizes)
    if "queue_delay_us" in values and out.HasField("sequence_batching"):
        out.sequence_batching.oldest.max_queue_delay_microseconds = values["queue_delay_us"]
    elif "queue_delay_us" in values:
        if values["queue_delay_us"] is None:
            out.ClearField("dynamic_batching")
        else:
            out.dynamic_batching.max_queue_delay_microseconds = values["queue_delay_us"]
    if "preferred" in values and out.HasField("dynamic_batching"):
        del out.dynamic_batching.preferred_batch_size[:]
        out.dynamic_batching.preferred_batch_size.extend(values["preferred"])
    for (name, knob), parameter in written.items():
        if name == step and knob in values:
            out.parameters[parameter].string_value = str(values[knob])
    return out


def cap_ensembles(configs: dict[str, mc.ModelConfig], capped: set[str]) -> dict[str, mc.ModelConfig]:
    """Ensembles running a step of `capped` (whose max_batch_size the point sets) with their max_batch_size lowered to
    that step's (Triton refuses an ensemble batching more than a step takes); the other configs as they are."""
    out = dict(configs)
    for name, config in configs.items():
        steps = {step.model_name for step in config.ensemble_scheduling.step} & capped
        limit = min((configs[step].max_batch_size for step in steps), default=config.max_batch_size)
        if config.max_batch_size > limit:
            out[name] = mc.ModelConfig()
            out[name].CopyFrom(config)
            out[name].max_batch_size = limit
    return out


def point_configs(point: Point, configs: dict[str, mc.ModelConfig], knobs: list[Knob]) -> dict[str, mc.ModelConfig]:
    """Every config of the candidate: the point's values applied to each model, ensembles capped to their steps."""
    written = parameters(knobs)
    capped = {step for step, knob in point if knob == "max_batch_size"}
    return cap_ensembles({m: apply_point(config, point, m, written) for m, config in configs.items()}, capped)


def _sequence_batching(spec: ModelSpec, config: mc.ModelConfig) -> dict[str, Any]:
    """A step's `sequence_batching` as served: the spec's, with the oldest strategy's searched settings."""
    if spec.sequence_batching is None or spec.sequence_batching.oldest is None:
        return {}
    served = config.sequence_batching.oldest
    oldest = spec.sequence_batching.oldest.model_copy(update={
        "max_queue_delay_microseconds": int(served.max_queue_delay_microseconds),
        "preferred_batch_size": list(served.preferred_batch_size)})
    return {"sequence_batching": spec.sequence_batching.model_copy(update={"oldest": oldest})}


def tuned_models(point: Point, knobs: list[Knob], top: str, specs: dict[str, ModelSpec],
                 configs: dict[str, mc.ModelConfig], provenance: Provenance) -> dict[str, TunedModel]:
    """The `tuned:` entries of the pipeline (its top model, with the measurement), of every step with knobs and of
    the ensembles whose max_batch_size follows a step's."""
    served = point_configs(point, configs, knobs)
    followers = [m for m in served if m != top and is_ensemble(specs[m])
                 and served[m].max_batch_size != specs[m].max_batch_size]
    scheduled = {step for step, knob in point if knob in ("max_batch_size", "queue_delay_us")}
    written = parameters(knobs)
    out = {}
    for name in [top, *dict.fromkeys(k.step for k in knobs if k.step != top), *followers]:
        entry = tuned_for(specs[name], served[name], provenance)
        params = dict(sorted((parameter, point[key]) for key, parameter in written.items() if key[0] == name))
        update = {**({"parameters": params} if params else {}),
                  **(_sequence_batching(specs[name], served[name]) if name in scheduled else {})}
        out[name] = entry.model_copy(update=update) if update else entry
    return out
