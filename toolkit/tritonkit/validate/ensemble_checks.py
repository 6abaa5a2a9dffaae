"""Ensemble checks as Triton 2.51 makes them at load time, plus cycles between ensembles.

Ported from triton-inference-server/core r24.10: `ValidateEnsembleSchedulingConfig` / `BuildEnsembleGraph`
(model_config_utils.cc: the config alone), `ValidateEnsembleConfig` / `ValidateTensorMapping` /
`ValidateTensorConsistency` (ensemble_utils.cc: against the step models' configs) and the dependency check
of model_repository_manager.cc (step models present, the asked `model_version` loaded).
"""
from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from tritonkit.triton.model_config import pb
from tritonkit.triton.model_graph import find_cycle
from tritonkit.validate.findings import Finding
from tritonkit.validate.io_checks import dims_match

_LATEST = -1  # step.model_version meaning "whatever version is loaded"


@dataclass(eq=False)
class _Node:
    """An ensemble tensor as ensemble_utils.cc's TensorNode: type and shape of its first use, flow links."""

    origin: str
    data_type: int = 0
    dims: tuple[int, ...] = ()
    full_dims: tuple[int, ...] = ()  # with the batch dim (-1) of a batching model
    decoupled: bool = False
    label: int = 0
    visited: bool = False
    prev: list[_Node] = field(default_factory=list)
    next: list[_Node] = field(default_factory=list)
    sibling: _Node | None = None  # shared by the outputs of one step


def _node(origin: str, batching: bool, data_type: int, dims) -> _Node:
    dims = tuple(dims)
    return _Node(origin, data_type, dims, ((-1,) if batching else ()) + dims)


def check_ensembles(configs: dict[str, pb.ModelConfig], unknown: frozenset[str] = frozenset(),
                    versions: Mapping[str, Collection[int]] | None = None) -> list[Finding]:
    """Findings for every ensemble in `configs` plus repository-wide cycle detection.

    `unknown` names models that exist but whose config is not known yet (an export a dry run skips): steps
    calling them are taken on trust. `versions` gives each model's loaded versions where the layout is known.
    """
    found: list[Finding] = []
    for name, c in configs.items():
        if c.platform == "ensemble" and c.HasField("ensemble_scheduling"):
            ensemble_found, unused = _check_scheduling(name, c, configs)
            steps_found = _check_steps(name, c, configs, unknown, versions or {})
            ensemble_found += steps_found + unused  # unused tensors last: often the echo of a step problem
            found += ensemble_found
            steps_known = all(s.model_name in configs for s in c.ensemble_scheduling.step)
            if steps_known and not any(f.severity == "error" for f in ensemble_found):
                found += _check_decoupled(name, c, configs)
    found += _check_cycles(configs)
    return found


# -- the config alone (ValidateEnsembleSchedulingConfig) ---------------------------------------------------------
def _check_scheduling(name: str, ens: pb.ModelConfig,
                      configs: dict[str, pb.ModelConfig]) -> tuple[list[Finding], list[Finding]]:
    """Findings on the step graph alone, and the unused step outputs among them."""
    found: list[Finding] = []
    for what, present in (("optimization", ens.HasField("optimization")), ("model_warmup", len(ens.model_warmup) > 0)):
        if present:
            found.append(Finding(name, what, f"an ensemble cannot have {what} (Triton refuses to load it)",
                                 f"remove {what} from the ensemble and set it on the composing models"))
    steps = list(ens.ensemble_scheduling.step)
    if not steps:
        return [*found, Finding(name, "ensemble_scheduling.step", "an ensemble needs at least one step",
                                "add a step with model_name, input_map and output_map")], []
    produced_by: dict[str, int] = {}
    consumed_by: dict[str, tuple[int, str]] = {}
    for i, step in enumerate(steps):
        where = f"ensemble_scheduling.step[{i}]"
        target = configs.get(step.model_name)
        # a missing input_map is "required input ... not mapped" instead
        named_elsewhere = target is not None and any(not t.optional for t in target.input)
        for what, empty in (("model_name", not step.model_name),
                            ("input_map", not step.input_map and not named_elsewhere),
                            ("output_map", not step.output_map)):
            if empty:
                found.append(Finding(name, f"{where}.{what}", f"step {i} has no {what}",
                                     f"set {what} (Triton requires it in every step)"))
        for key, dst in step.output_map.items():
            if dst in produced_by:
                first = f"step {produced_by[dst]}" if produced_by[dst] != i else "this step"
                found.append(Finding(name, f"{where}.output_map.{key}",
                                     f"tensor '{dst}' is already produced by {first}",
                                     "give each step output its own tensor name"))
            produced_by.setdefault(dst, i)
        for key, src in step.input_map.items():
            consumed_by.setdefault(src, (i, key))
    inputs = [t.name for t in ens.input]
    ready = _ready_tensors(steps, inputs)
    for i, t in enumerate(ens.input):
        if t.name not in produced_by and t.name not in consumed_by:
            found.append(Finding(name, f"input[{i}]", f"ensemble input '{t.name}' is not consumed by any step",
                                 "map it in a step's input_map or remove it"))
        elif t.name in produced_by:
            found.append(Finding(name, f"ensemble_scheduling.step[{produced_by[t.name]}].output_map", "a step writes "
                                 f"ensemble input '{t.name}' (Triton 2.51 loads this, but the step's output then "
                                 "competes with the request's tensor)", "give the step output its own name", "warning"))
    outputs = {t.name for t in ens.output}
    for i, t in enumerate(ens.output):
        if t.name not in produced_by and t.name not in consumed_by:
            found.append(Finding(name, f"output[{i}]", f"ensemble output '{t.name}' is not produced by any step",
                                 "map a step output to it in output_map"))
    waiting: set[int] = set()
    for src, (i, key) in consumed_by.items():
        if src not in ready and src not in produced_by and src not in inputs:
            waiting.add(i)
            found.append(Finding(name, f"ensemble_scheduling.step[{i}].input_map.{key}",
                                 f"tensor '{src}' is neither an ensemble input nor produced by another step",
                                 "map it to an ensemble input or to a step's output_map value"))
    for i, step in enumerate(steps):
        blocked = [src for src in step.input_map.values() if src not in ready]
        if blocked and i not in waiting and all(src in produced_by or src in inputs for src in blocked):
            listed = ", ".join(f"'{src}'" for src in dict.fromkeys(blocked))
            found.append(Finding(name, f"ensemble_scheduling.step[{i}]", f"step '{step.model_name}' can never run: it "
                                 f"waits on {listed}, which only steps in a cycle or that cannot run write",
                                 "break the cycle in input_map/output_map"))
    unused: list[Finding] = []
    for dst, i in produced_by.items():
        if dst in ready and dst not in outputs and dst not in consumed_by:
            key = next(k for k, v in steps[i].output_map.items() if v == dst)
            unused.append(Finding(name, f"ensemble_scheduling.step[{i}].output_map.{key}",
                                  f"tensor '{dst}' is neither read by a step nor an ensemble output (Triton refuses "
                                  "unused ensemble tensors)", "remove this output_map entry or use the tensor"))
    return found, unused


def _ready_tensors(steps: list, inputs: list[str]) -> set[str]:
    """Tensors that can be computed from the ensemble inputs (BuildEnsembleGraph's data-flow walk)."""
    ready = set(inputs)
    progress = True
    while progress:
        progress = False
        for step in steps:
            if step.input_map and all(src in ready for src in step.input_map.values()):
                new = set(step.output_map.values()) - ready
                if new:
                    ready |= new
                    progress = True
    return ready


# -- against the step models (ValidateEnsembleConfig, dependency check) -------------------------------------------
def _check_steps(name: str, ens: pb.ModelConfig, configs: dict[str, pb.ModelConfig], unknown: frozenset[str],
                 versions: Mapping[str, Collection[int]]) -> list[Finding]:
    found: list[Finding] = []
    batching = ens.max_batch_size > 0
    tensors: dict[str, _Node] = {}
    for kind, io in (("input", ens.input), ("output", ens.output)):
        for t in io:
            dims = t.reshape.shape if t.HasField("reshape") else t.dims
            tensors.setdefault(t.name, _node(f"ensemble {kind} '{t.name}'", batching, t.data_type, dims))
    for i, step in enumerate(ens.ensemble_scheduling.step):
        where = f"ensemble_scheduling.step[{i}]"
        target = configs.get(step.model_name)
        if not step.model_name or step.model_name in unknown:
            continue
        if step.model_name == name:
            found.append(Finding(name, f"{where}.model_name", "an ensemble cannot call itself",
                                 "call a composing model"))
            continue
        if target is None:
            others = ", ".join(sorted(n for n in configs if n != name)) or "(none)"
            found.append(Finding(name, f"{where}.model_name", f"model '{step.model_name}' does not "
                                 "exist in the repository", f"add it or use one of: {others}"))
            continue
        found += _check_version(name, where, step, versions.get(step.model_name))
        if target.max_batch_size != 0 and target.max_batch_size < ens.max_batch_size:
            found.append(Finding(name, "max_batch_size", f"{ens.max_batch_size} > max_batch_size "
                                 f"{target.max_batch_size} of step model '{step.model_name}'",
                                 "lower the ensemble's max_batch_size"))
        found += _check_mapping(name, where, step, target, tensors)
    return found


def _check_version(name: str, where: str, step, loaded: Collection[int] | None) -> list[Finding]:
    if loaded is None or step.model_version == _LATEST or step.model_version in loaded:
        return []
    have = ", ".join(str(v) for v in sorted(loaded)) or "none"
    unset = " (an unset model_version means 0)" if step.model_version == 0 else ""
    return [Finding(name, f"{where}.model_version", f"step asks for version {step.model_version} of "
                    f"'{step.model_name}'{unset} but Triton loads only version(s) {have} of it",
                    "use model_version: -1 (the loaded version), or add the version folder / widen its version_policy")]


def _check_mapping(name: str, where: str, step, target: pb.ModelConfig, tensors: dict[str, _Node]) -> list[Finding]:
    """ValidateTensorMapping: every required input mapped, only real inputs/outputs, consistent types and shapes."""
    found: list[Finding] = []
    batching = target.max_batch_size > 0
    inputs = {t.name: t for t in target.input}
    outputs = {t.name: t for t in target.output}
    for key in step.input_map:
        if key not in inputs:
            found.append(Finding(name, f"{where}.input_map.{key}", f"'{step.model_name}' has no input '{key}'",
                                 f"use one of: {', '.join(inputs) or '(none)'}"))
    for key, t in inputs.items():  # in the model's input order, as Triton registers them
        if key in step.input_map:
            found += _register(name, f"{where}.input_map.{key}", tensors, step.input_map[key],
                               _node(f"input '{key}' of '{step.model_name}'", batching, t.data_type, t.dims))
        elif not t.optional:
            found.append(Finding(name, f"{where}.input_map", f"required input '{key}' of '{step.model_name}' is not "
                                 "mapped", f"add input_map entry {key}: <ensemble tensor>"))
    sibling = _Node(f"step '{step.model_name}'")
    for key, dst in step.output_map.items():
        if key not in outputs:
            found.append(Finding(name, f"{where}.output_map.{key}", f"'{step.model_name}' has no output '{key}'",
                                 f"use one of: {', '.join(outputs) or '(none)'}"))
            continue
        t = outputs[key]
        found += _register(name, f"{where}.output_map.{key}",
                           tensors, dst, _node(f"output '{key}' of '{step.model_name}'", batching, t.data_type, t.dims))
        tensors[dst].sibling = sibling
    return found


def _register(name: str, where: str, tensors: dict[str, _Node], tensor: str, node: _Node) -> list[Finding]:
    """The first use of an ensemble tensor fixes its type and shape; later ones agree (ValidateTensorConsistency)."""
    first = tensors.setdefault(tensor, node)
    if first is node:
        return []
    if first.data_type != node.data_type:
        return [Finding(name, where, f"tensor '{tensor}': {node.origin} is {pb.DataType.Name(node.data_type)} but "
                        f"{first.origin} is {pb.DataType.Name(first.data_type)}",
                        "make the data types equal (or add a conversion step)")]
    if not dims_match(first.dims, node.dims) and not dims_match(first.full_dims, node.full_dims):
        return [Finding(name, where, f"tensor '{tensor}': {node.origin} has dims {list(node.dims)} but {first.origin} "
                        f"has dims {list(first.dims)}, and with batch dims {list(node.full_dims)} vs "
                        f"{list(first.full_dims)}", "make the shapes compatible (-1 matches any size)")]
    return []


# -- decoupled steps (the label walk at the end of ValidateEnsembleConfig) ----------------------------------------
def _check_decoupled(name: str, ens: pb.ModelConfig, configs: dict[str, pb.ModelConfig]) -> list[Finding]:
    """No step (nor the ensemble's outputs) may take inputs from two different decoupled steps.

    Triton then marks the ensemble decoupled exactly when a decoupled step feeds it, whatever the config says;
    tritonkit asks the config to say so (a warning), since clients must know whether to stream.
    """
    tensors: dict[str, _Node] = {t.name: _Node(f"ensemble input '{t.name}'") for t in ens.input}
    sink = _Node(f"ensemble '{name}'")
    for t in ens.output:
        node = tensors.setdefault(t.name, _Node(f"ensemble output '{t.name}'"))
        sink.prev.append(node)
        node.next.append(sink)
    decoupled_steps = []
    for step in ens.ensemble_scheduling.step:
        is_decoupled = configs[step.model_name].model_transaction_policy.decoupled
        if is_decoupled:
            decoupled_steps.append(step.model_name)
        sibling = _Node(f"step '{step.model_name}'")
        for dst in step.output_map.values():
            node = tensors.setdefault(dst, _Node(f"output of step '{step.model_name}'"))
            node.origin, node.decoupled, node.sibling = f"step '{step.model_name}'", is_decoupled, sibling
            for src in step.input_map.values():
                prev = tensors.setdefault(src, _Node(src))
                node.prev.append(prev)
                prev.next.append(node)
    label = 0
    queue = [tensors[t.name] for t in ens.input]
    for node in queue:
        node.visited = True
    found: list[Finding] = []
    while queue:
        current = queue.pop(0)
        for nxt in current.next:
            if nxt.visited or not all(p.visited for p in nxt.prev):
                continue
            first = nxt.prev[0].label
            if any(p.label != first for p in nxt.prev):
                found.append(Finding(name, "ensemble_scheduling", f"{nxt.origin} receives inputs that come from "
                                     "different decoupled steps (Triton refuses to load this)",
                                     "feed it from one decoupled step, or make the steps non-decoupled"))
                return found
            if nxt.sibling is not None and nxt.sibling.visited:
                nxt.label = nxt.sibling.label
            else:
                label = label + 1 if nxt.decoupled else label
                nxt.label = label if nxt.decoupled else first
                if nxt.sibling is not None:
                    nxt.sibling.label, nxt.sibling.visited = nxt.label, True
            nxt.visited = True
            queue.append(nxt)
    declared = ens.model_transaction_policy.decoupled
    if label and not declared:
        found.append(Finding(name, "model_transaction_policy.decoupled", f"decoupled step '{decoupled_steps[0]}' makes "
                             "the ensemble decoupled (Triton 2.51 sets this itself) but its config does not say so",
                             "declare it: model_transaction_policy { decoupled: true }, so clients know to stream",
                             "warning"))
    elif declared and not label:
        found.append(Finding(name, "model_transaction_policy.decoupled", "the ensemble is declared decoupled but no "
                             "decoupled step feeds it (Triton 2.51 loads it as not decoupled)",
                             "remove decoupled: true", "warning"))
    return found


def _check_cycles(configs: dict[str, pb.ModelConfig]) -> list[Finding]:
    """Ensembles that (transitively) contain themselves: Triton never loads them (each waits for the other).

    Only ensemble steps between ensembles count here; a cycle through a BLS model is named once by check_bls.
    """
    ensembles = {n: c for n, c in configs.items() if c.platform == "ensemble"}
    found = []
    for name in ensembles:
        cycle = find_cycle(ensembles, name)
        if cycle:
            found.append(Finding(name, "ensemble_scheduling",
                                 "ensembles call each other in a cycle: " + " -> ".join(cycle),
                                 "remove one of the nested ensemble steps"))
    return found
