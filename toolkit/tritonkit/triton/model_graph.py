"""Which models call which: ensemble steps and declared BLS calls, read from parsed configs.

One graph serves the cycle check, the order in which models must be ready (callees before callers)
and smoke's readiness check of a caller's callees.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: importing the graph does not load the protobuf module
    from tritonkit.triton.model_config import pb

#: The config.pbtxt parameter that carries a BLS model's `bls.calls`, comma-separated (written by the build).
BLS_CALLS_PARAMETER = "bls_calls"


def bls_calls(config: pb.ModelConfig) -> list[str]:
    """The models a BLS model declares it calls (the `bls_calls` parameter), in declaration order."""
    param = config.parameters.get(BLS_CALLS_PARAMETER)
    return [c.strip() for c in param.string_value.split(",") if c.strip()] if param is not None else []


def model_calls(config: pb.ModelConfig) -> list[str]:
    """Every model `config` sends requests to: its ensemble steps and its BLS calls, each once."""
    steps = [s.model_name for s in config.ensemble_scheduling.step] if config.platform == "ensemble" else []
    return list(dict.fromkeys([*steps, *bls_calls(config)]))


def load_order(configs: dict[str, pb.ModelConfig]) -> list[str]:
    """Model names with every model after the models it calls; otherwise in the given order.

    Models in a cycle (already a validation error) keep their given order rather than being dropped.
    """
    order: list[str] = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if name in order or name in visiting or name not in configs:
            return
        visiting.add(name)
        for callee in model_calls(configs[name]):
            visit(callee)
        visiting.discard(name)
        order.append(name)

    for name in configs:
        visit(name)
    return order


def with_callees(configs: dict[str, pb.ModelConfig], names: list[str]) -> list[str]:
    """`names` plus every model they call, transitively, in load order: the startup set of explicit model
    control, where Triton loads an ensemble's steps by itself but a BLS model's callees only when named."""
    wanted: set[str] = set()
    pending = list(names)
    while pending:
        name = pending.pop()
        if name not in wanted and name in configs:
            wanted.add(name)
            pending += model_calls(configs[name])
    return [name for name in load_order(configs) if name in wanted]


def find_cycle(configs: dict[str, pb.ModelConfig], start: str) -> list[str] | None:
    """A shortest call path start -> ... -> start through ensemble steps and BLS calls, or None.

    The path passes through at least one other model: a model calling itself is its own finding, and must not
    hide a longer cycle it is also in.
    """
    paths = [[start]]
    seen = {start}
    while paths:
        next_paths = []
        for path in paths:
            node = configs.get(path[-1])
            for callee in model_calls(node) if node is not None else []:
                if callee == start and len(path) > 1:
                    return [*path, start]
                if callee not in seen and callee in configs:
                    seen.add(callee)
                    next_paths.append([*path, callee])
        paths = next_paths
    return None
