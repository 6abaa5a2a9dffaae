"""Maps the winning Model Analyzer variant back onto the spec: the `tuned:` entry of each model it changed.

Only what the search varied is taken (max batch size, instance count, dynamic batching); the variant's other fields are
the built config (or its Python-backend fallback, for ONNX models served embedded) and stay the spec's. The instance
kind stays the spec's too: a CPU-only host measures KIND_CPU copies, but the spec may deploy on GPUs.
"""
from typing import Any

from google.protobuf import json_format

from tritonkit.spec.instances import InstanceGroup
from tritonkit.spec.model import ModelSpec
from tritonkit.spec.scheduling import DynamicBatching
from tritonkit.spec.tuned import Provenance, TunedModel
from tritonkit.triton.instance_counts import group_count, instance_groups
from tritonkit.triton.model_config import pb as mc
from tritonkit.tune.results.measurements import TuneResults
from tritonkit.tune.targets.model import TuneTarget, is_ensemble


def parse_variant(config: dict[str, Any]) -> mc.ModelConfig:
    """Model Analyzer's JSON form of a variant config (camelCase, 64-bit numbers as strings) as protobuf."""
    return json_format.ParseDict(config, mc.ModelConfig(), ignore_unknown_fields=True)


def instance_count(config: mc.ModelConfig) -> int:
    """Instances the variant runs in all (Triton's default count where a group leaves it out)."""
    return sum(group_count(config, g) for g in instance_groups(config)) or 1


def tuned_for(spec: ModelSpec, config: mc.ModelConfig, provenance: Provenance) -> TunedModel:
    """The tuned entry that makes `spec` render with the variant's searched settings."""
    update: dict[str, Any] = {"provenance": provenance}
    if is_ensemble(spec):
        return TunedModel(max_batch_size=config.max_batch_size, **update)
    template = spec.instance_group[0] if spec.instance_group else InstanceGroup()
    update["instance_group"] = [template.model_copy(update={"count": instance_count(config)})]
    if spec.max_batch_size > 0:
        update["max_batch_size"] = config.max_batch_size
    if config.HasField("dynamic_batching"):
        base = spec.dynamic_batching or DynamicBatching()
        preferred, note = preferred_sizes(base, config)
        update["dynamic_batching"] = base.model_copy(update={
            "preferred_batch_size": preferred,
            "max_queue_delay_microseconds": int(config.dynamic_batching.max_queue_delay_microseconds)})
        if note:
            update["provenance"] = provenance.model_copy(update={"notes": [*provenance.notes, note]})
    return TunedModel(**update)


def preferred_sizes(base: DynamicBatching, config: mc.ModelConfig) -> tuple[list[int], str | None]:
    """The preferred batch sizes to write back, and a note when they are not simply the variant's.

    Quick search measures without preferred sizes (a size above a smaller max batch size would make a variant
    illegal), so an empty list there is no decision: the spec's sizes are kept, those above the tuned max batch
    size dropped, and the note says so in the provenance.
    """
    measured = list(config.dynamic_batching.preferred_batch_size)
    if measured or not base.preferred_batch_size:
        return measured, None
    kept = [size for size in base.preferred_batch_size if size <= config.max_batch_size]
    dropped = [size for size in base.preferred_batch_size if size > config.max_batch_size]
    note = f"dynamic_batching.preferred_batch_size {kept} kept from the spec (measured without preferred sizes)"
    if dropped:
        note += f"; {dropped} dropped: above the tuned max_batch_size {config.max_batch_size}"
    return kept, note


def model_of_variant(variant: str, models: tuple[str, ...]) -> str:
    """`preprocess_config_3` -> `preprocess` (the longest model name the variant starts with)."""
    for name in sorted(models, key=len, reverse=True):
        if variant == name or variant.startswith(name + "_config_"):
            return name
    raise ValueError(f"variant '{variant}' belongs to none of {models}")


def variant_settings(results: TuneResults, variant: str, target: TuneTarget) -> dict[str, mc.ModelConfig]:
    """Model name -> the config the winning configuration ran it with (the top model and its composing models)."""
    out = {target.name: parse_variant(results.configs[variant])}
    for comp in results.composing.get(variant, ()):
        out[model_of_variant(comp, target.models)] = parse_variant(results.configs[comp])
    return out


def tuned_entries(results: TuneResults, variant: str, target: TuneTarget, specs: dict[str, ModelSpec],
                  provenance: Provenance) -> dict[str, TunedModel]:
    """The `tuned:` entries for every model of the winning configuration."""
    return {name: tuned_for(specs[name], config, provenance)
            for name, config in variant_settings(results, variant, target).items()}


def describe(config: mc.ModelConfig) -> str:
    """`2 instances, max batch 16, delay 0 us, preferred [8]`: a configuration in a table cell."""
    parts = [f"{instance_count(config)} inst"] if config.instance_group else []
    if config.max_batch_size:
        parts.append(f"batch {config.max_batch_size}")
    if config.HasField("dynamic_batching"):
        db = config.dynamic_batching
        parts.append(f"dyn {db.max_queue_delay_microseconds}us")
        if db.preferred_batch_size:
            parts.append(f"pref {list(db.preferred_batch_size)}")
    elif config.sequence_batching.HasField("oldest"):  # an engine's steps
        parts.append(f"seq {config.sequence_batching.oldest.max_queue_delay_microseconds}us")
    elif config.max_batch_size:
        parts.append("no dyn")
    return ", ".join(parts) or "as built"
