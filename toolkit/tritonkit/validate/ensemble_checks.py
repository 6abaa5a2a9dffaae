"""Checks that span models: ensemble wiring, cycles, and where decoupled models may sit."""
from __future__ import annotations

from dataclasses import dataclass

from tritonkit.model_config import pb
from tritonkit.validate.findings import Finding


@dataclass(frozen=True)
class _Tensor:
    """A tensor as seen by the wiring: its type and per-request dims (batch dim excluded)."""

    data_type: int
    dims: tuple[int, ...]
    origin: str


def check_ensembles(configs: dict[str, pb.ModelConfig], unknown: frozenset[str] = frozenset()) -> list[Finding]:
    """Findings for every ensemble in `configs` plus repository-wide cycle detection.

    `unknown` names models that exist but whose config is not known yet (an export a dry run skips):
    steps calling them are taken on trust.
    """
    found: list[Finding] = []
    for name, c in configs.items():
        if c.platform == "ensemble" and c.HasField("ensemble_scheduling"):
            found += _check_wiring(name, c, configs, unknown)
    found += _check_cycles(configs)
    return found


def _is_decoupled(c: pb.ModelConfig) -> bool:
    return c.model_transaction_policy.decoupled


def _check_wiring(name: str, ens: pb.ModelConfig, configs: dict[str, pb.ModelConfig], unknown: frozenset[str]) -> list[Finding]:
    found: list[Finding] = []
    # Tensor name -> its type; None when its producer is broken (reported once, not again downstream).
    available: dict[str, _Tensor | None] = {t.name: _Tensor(t.data_type, tuple(t.dims), "ensemble input") for t in ens.input}
    consumed: set[str] = set()
    producers: dict[str, str] = {}
    steps = list(ens.ensemble_scheduling.step)
    pending = list(range(len(steps)))
    # Resolve steps in dependency order so each input's producer is known; leftovers are unresolvable.
    progress = True
    while pending and progress:
        progress = False
        for index in list(pending):
            step = steps[index]
            if all(src in available for src in step.input_map.values()) or step.model_name not in configs:
                pending.remove(index)
                progress = True
                found += _check_step(name, ens, index, step, configs, available, consumed, producers, unknown)
    unresolved_outputs = {dst for index in pending for dst in steps[index].output_map.values()}
    for index in pending:
        step = steps[index]
        missing = [src for src in step.input_map.values() if src not in available and src not in unresolved_outputs]
        consumed.update(step.input_map.values())
        for dst in step.output_map.values():
            producers.setdefault(dst, f"step {index} ('{step.model_name}')")
        for key, src in step.input_map.items():
            if src in missing:
                found.append(Finding(name, f"ensemble_scheduling.step[{index}].input_map.{key}", f"tensor '{src}' is neither an ensemble input nor produced by another step", "map it to an ensemble input or to a step's output_map value"))
        if not missing:
            waits = ", ".join(f"'{src}'" for src in step.input_map.values() if src not in available)
            found.append(Finding(name, f"ensemble_scheduling.step[{index}]", f"step '{step.model_name}' waits on {waits}, which only steps in a cycle produce", "break the cycle in input_map/output_map"))
    for i, t in enumerate(ens.input):
        if t.name not in consumed:
            found.append(Finding(name, f"input[{i}]", f"ensemble input '{t.name}' is not consumed by any step", "map it in a step's input_map or remove it"))
    for i, t in enumerate(ens.output):
        if t.name not in producers:
            found.append(Finding(name, f"output[{i}]", f"ensemble output '{t.name}' is not produced by any step", "map a step output to it in output_map"))
        elif (produced := available.get(t.name)) is not None:
            found += _compare(name, f"output[{i}]", _Tensor(t.data_type, tuple(t.dims), "ensemble output"), produced)
    return found


def _check_step(name, ens, index, step, configs, available, consumed, producers, unknown) -> list[Finding]:
    where = f"ensemble_scheduling.step[{index}]"
    target = configs.get(step.model_name)
    if target is None or step.model_name == name:
        consumed.update(step.input_map.values())
        for dst in step.output_map.values():
            producers.setdefault(dst, f"step {index} ('{step.model_name}')")
            available.setdefault(dst, None)
        if target is None and step.model_name not in unknown:
            return [Finding(name, f"{where}.model_name", f"model '{step.model_name}' does not exist", f"add it to the repository or use one of: {', '.join(sorted(configs))}")]
        return [] if target is None else [Finding(name, f"{where}.model_name", "an ensemble cannot call itself", "call a composing model")]
    found: list[Finding] = []
    if _is_decoupled(target) and not _is_decoupled(ens):
        found.append(Finding(name, f"{where}.model_name", f"decoupled model '{step.model_name}' may send many responses but ensemble '{name}' must send exactly one", "declare the ensemble decoupled (model_transaction_policy.decoupled: true) or use a non-decoupled model"))
    if ens.max_batch_size > target.max_batch_size:
        found.append(Finding(name, "max_batch_size", f"{ens.max_batch_size} > max_batch_size {target.max_batch_size} of step model '{step.model_name}'", "lower the ensemble's max_batch_size"))
    inputs = {t.name: t for t in target.input}
    outputs = {t.name: t for t in target.output}
    for key, src in step.input_map.items():
        consumed.add(src)
        if key not in inputs:
            found.append(Finding(name, f"{where}.input_map.{key}", f"'{step.model_name}' has no input '{key}'", f"use one of: {', '.join(inputs) or '(none)'}"))
            continue
        if available.get(src) is not None:
            found += _compare(name, f"{where}.input_map.{key}", _Tensor(inputs[key].data_type, tuple(inputs[key].dims), f"input '{key}' of '{step.model_name}'"), available[src])
    for key, t in inputs.items():
        if not t.optional and key not in step.input_map:
            found.append(Finding(name, f"{where}.input_map", f"required input '{key}' of '{step.model_name}' is not mapped", f"add input_map entry {key}: <ensemble tensor>"))
    for key, dst in step.output_map.items():
        if key not in outputs:
            found.append(Finding(name, f"{where}.output_map.{key}", f"'{step.model_name}' has no output '{key}'", f"use one of: {', '.join(outputs) or '(none)'}"))
            producers.setdefault(dst, f"step {index} ('{step.model_name}')")
            available.setdefault(dst, None)
            continue
        if dst in producers or dst in {t.name for t in ens.input}:
            found.append(Finding(name, f"{where}.output_map.{key}", f"tensor '{dst}' is already produced by {producers.get(dst, 'the ensemble input')}", "give each produced tensor a unique name"))
            continue
        producers[dst] = f"step {index} ('{step.model_name}')"
        available[dst] = _Tensor(outputs[key].data_type, tuple(outputs[key].dims), f"output '{key}' of '{step.model_name}'")
    return found


def _compare(name: str, field: str, consumer: _Tensor, producer: _Tensor) -> list[Finding]:
    """Dtype equality and shape compatibility (-1 matches anything; ranks must agree)."""
    if consumer.data_type != producer.data_type:
        return [Finding(name, field, f"{consumer.origin} is {pb.DataType.Name(consumer.data_type)} but {producer.origin} is {pb.DataType.Name(producer.data_type)}", "make the data types equal (or add a conversion step)")]
    a, b = consumer.dims, producer.dims
    if len(a) != len(b) or any(x != y and -1 not in (x, y) for x, y in zip(a, b)):
        return [Finding(name, field, f"{consumer.origin} has dims {list(a)} but {producer.origin} has dims {list(b)}", "make the shapes compatible (or reshape in the producing model)")]
    return []


def _check_cycles(configs: dict[str, pb.ModelConfig]) -> list[Finding]:
    """Ensembles that (transitively) contain themselves."""
    graph = {n: [s.model_name for s in c.ensemble_scheduling.step] for n, c in configs.items() if c.platform == "ensemble"}
    found = []
    for start in graph:
        stack, seen = [(start, [start])], set()
        while stack:
            node, path = stack.pop()
            for nxt in graph.get(node, []):
                if nxt == start and len(path) > 1:
                    found.append(Finding(start, "ensemble_scheduling", "ensembles call each other in a cycle: " + " -> ".join(path + [start]), "remove one of the nested ensemble steps"))
                    stack = []
                    break
                if nxt in graph and nxt not in seen and nxt != start:
                    seen.add(nxt)
                    stack.append((nxt, path + [nxt]))
    return found
