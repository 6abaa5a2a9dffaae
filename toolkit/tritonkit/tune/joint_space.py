"""The joint search space of a pipeline: each step's knobs (instances, queue delay, preferred sizes, threads).

A point is one value per knob. It is applied to the step's built config.pbtxt (protobuf, as Model Analyzer makes
its variants) to serve a candidate, and mapped back to the spec's `tuned:` overlay through `mapping.tuned_for`,
the same code the Model Analyzer path writes back with.
"""
import itertools
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tritonkit.spec.model import ModelSpec
from tritonkit.spec.tuned import Provenance, TunedModel
from tritonkit.triton.instance_counts import group_count, instance_groups
from tritonkit.triton.model_config import pb as mc
from tritonkit.tune.joint_target import LLM_ENGINE_PARAMETER
from tritonkit.tune.mapping import tuned_for
from tritonkit.tune.target import is_ensemble

THREADS_PARAMETER = "intra_op_thread_count"
#: Queue delays tried for a step that batches (microseconds); the spec's own value is always among them.
DELAYS_US = (0, 1000, 5000)
KNOB_NAMES = ("instances", "queue_delay_us", "preferred", "threads", "max_batch_size", "kv_cache_bytes")

Key = tuple[str, str]  # (step, knob)
Point = dict[Key, Any]


@dataclass(frozen=True)
class Knob:
    """One setting of one step and the values the search may give it; `default` is the spec's own."""

    step: str
    name: str  # "instances", "queue_delay_us" (None: no dynamic batching), "preferred", "threads", and the LLM
    # engine's "max_batch_size" (generations per step) and "kv_cache_bytes"
    values: tuple[Any, ...]
    default: Any

    @property
    def key(self) -> Key:
        return (self.step, self.name)


def _has_threads(spec: ModelSpec) -> bool:
    exported = spec.source is not None and spec.backend is None and spec.platform is None  # built as ONNX
    onnx = exported or spec.platform == "onnxruntime_onnx" or spec.backend == "onnxruntime"
    return onnx or THREADS_PARAMETER in spec.parameters


def _engine_knobs(name: str, spec: ModelSpec, delays: tuple[int, ...]) -> list[Knob]:
    """The LLM engine's step settings: generations per step, the oldest strategy's queue delay where Triton
    schedules its steps (sequence batching), the KV budget. Never instances or dynamic batching: the engine steps
    its generations itself, and its KV caches live in its one process."""
    size = spec.max_batch_size
    oldest = spec.sequence_batching.oldest if spec.sequence_batching is not None else None
    knobs = [Knob(name, "max_batch_size", tuple(sorted({max(1, size // 4), max(1, size // 2), size, 2 * size})), size)]
    if oldest is not None:
        delay = oldest.max_queue_delay_microseconds
        knobs.append(Knob(name, "queue_delay_us", tuple(sorted({*delays, delay})), delay))
    kv = int(spec.parameters[LLM_ENGINE_PARAMETER])
    return [*knobs, Knob(name, "kv_cache_bytes", (kv // 2, kv, 2 * kv), kv)]


def step_knobs(name: str, spec: ModelSpec, max_instances: int, cores: int,
               delays: tuple[int, ...] = DELAYS_US) -> list[Knob]:
    """The knobs of one step; none for an ensemble, and no instances or batching for a sequence model or an LLM
    engine (their streams' state lives in one instance)."""
    if is_ensemble(spec):
        return []
    engine = LLM_ENGINE_PARAMETER in spec.parameters
    knobs = _engine_knobs(name, spec, delays) if engine else []
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
        knobs.append(Knob(name, "threads", tuple(sorted(wanted)), own_threads))
    return [k for k in knobs if len(k.values) > 1]


def pipeline_knobs(models: tuple[str, ...], specs: dict[str, ModelSpec], max_instances: int | None,
                   names: tuple[str, ...] = KNOB_NAMES, delays: tuple[int, ...] = DELAYS_US) -> list[Knob]:
    """Every step's knobs of the kinds in `names`, in the pipeline's order (a step's instances before its batching)."""
    cores = os.cpu_count() or 1
    limit = max_instances or max(2, min(4, cores))
    knobs = [knob for name in models for knob in step_knobs(name, specs[name], limit, cores, delays)]
    kept = [knob for knob in knobs if knob.name in names]
    batching = {k.step for k in kept if k.name == "queue_delay_us"} | {
        name for name in models if specs[name].dynamic_batching is not None}
    return [k for k in kept if k.name != "preferred" or k.step in batching]  # sizes need batching on


def grid_size(knobs: list[Knob]) -> int:
    """How many distinct configurations `grid` yields (preferred sizes collapse where batching is off)."""
    total = 1
    for step in dict.fromkeys(k.step for k in knobs):
        own = {k.name: k for k in knobs if k.step == step}
        size = math.prod(len(k.values) for name, k in own.items() if name not in ("queue_delay_us", "preferred"))
        delay, preferred = own.get("queue_delay_us"), own.get("preferred")
        sizes = len(preferred.values) if preferred else 1
        if delay is None:
            batching = sizes
        else:
            off = 1 if None in delay.values else 0
            batching = (len(delay.values) - off) * sizes + off
        total *= size * batching
    return total


def default_point(knobs: list[Knob]) -> Point:
    return {k.key: k.default for k in knobs}


def normalize(point: Point, knobs: list[Knob]) -> Point:
    """Preferred sizes mean nothing without dynamic batching: such points are the same configuration."""
    out = dict(point)
    for knob in knobs:
        if knob.name == "preferred" and out.get((knob.step, "queue_delay_us"), 0) is None:
            out[knob.key] = knob.default
    return out


def point_id(point: Point) -> tuple[tuple[Key, Any], ...]:
    return tuple(sorted(point.items(), key=lambda item: item[0]))


def grid(knobs: list[Knob]) -> Iterator[Point]:
    """Every distinct configuration of the space (the brute-force baseline the descent is compared with)."""
    seen = set()
    for values in itertools.product(*(k.values for k in knobs)):
        point = normalize(dict(zip((k.key for k in knobs), values)), knobs)
        if point_id(point) not in seen:
            seen.add(point_id(point))
            yield point


def apply_point(config: mc.ModelConfig, point: Point, step: str) -> mc.ModelConfig:
    """A copy of the step's built config with the point's values for that step."""
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
    if "kv_cache_bytes" in values:
        out.parameters[LLM_ENGINE_PARAMETER].string_value = str(values["kv_cache_bytes"])
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
    if "threads" in values:
        out.parameters[THREADS_PARAMETER].string_value = str(values["threads"])
    return out


def cap_ensembles(configs: dict[str, mc.ModelConfig], engine: str | None) -> dict[str, mc.ModelConfig]:
    """Ensembles running the engine with their max_batch_size lowered to the engine's (Triton refuses an ensemble
    batching more than a step takes); the other configs as they are."""
    if engine is None:
        return configs
    out = dict(configs)
    for name, config in configs.items():
        steps = {step.model_name for step in config.ensemble_scheduling.step}
        if engine in steps and config.max_batch_size > configs[engine].max_batch_size:
            out[name] = mc.ModelConfig()
            out[name].CopyFrom(config)
            out[name].max_batch_size = configs[engine].max_batch_size
    return out


def point_configs(point: Point, configs: dict[str, mc.ModelConfig], engine: str | None) -> dict[str, mc.ModelConfig]:
    """Every config of the candidate: the point's values applied to each model, ensembles capped to the engine."""
    return cap_ensembles({m: apply_point(config, point, m) for m, config in configs.items()}, engine)


def _sequence_batching(spec: ModelSpec, config: mc.ModelConfig) -> dict[str, Any]:
    """The engine's `sequence_batching` as served: the spec's, with the oldest strategy's searched settings."""
    if spec.sequence_batching is None or spec.sequence_batching.oldest is None:
        return {}
    served = config.sequence_batching.oldest
    oldest = spec.sequence_batching.oldest.model_copy(update={
        "max_queue_delay_microseconds": int(served.max_queue_delay_microseconds),
        "preferred_batch_size": list(served.preferred_batch_size)})
    return {"sequence_batching": spec.sequence_batching.model_copy(update={"oldest": oldest})}


def tuned_models(point: Point, knobs: list[Knob], top: str, specs: dict[str, ModelSpec],
                 configs: dict[str, mc.ModelConfig], provenance: Provenance,
                 engine: str | None = None) -> dict[str, TunedModel]:
    """The `tuned:` entries of the pipeline (its top model, with the measurement), of every step with knobs and of
    the ensembles whose max_batch_size follows the engine's."""
    served = point_configs(point, configs, engine)
    followers = [m for m in served if m != top and is_ensemble(specs[m])
                 and served[m].max_batch_size != specs[m].max_batch_size]
    out = {}
    for name in [top, *dict.fromkeys(k.step for k in knobs if k.step != top), *followers]:
        entry = tuned_for(specs[name], served[name], provenance)
        parameters = {key: point[(name, knob)] for knob, key in (("threads", THREADS_PARAMETER),
                      ("kv_cache_bytes", LLM_ENGINE_PARAMETER)) if (name, knob) in point}
        update = {**({"parameters": parameters} if parameters else {}),
                  **(_sequence_batching(specs[name], served[name]) if name == engine else {})}
        out[name] = entry.model_copy(update=update) if update else entry
    return out


def describe_point(point: Point, base: Point) -> str:
    """`decoder.instances=2, features.queue_delay_us=1000`: what differs from `base` ("default" when nothing)."""
    changed = [f"{step}.{knob}={value}" for (step, knob), value in sorted(point.items(), key=lambda i: i[0])
               if base.get((step, knob)) != value]
    return ", ".join(changed) or "default"
