"""Batch size, dynamic batching, response cache and batching-library rules of Triton 2.51 (ValidateModelConfig).

Sequence batching has its own module (sequence_checks); what Triton accepts but ignores or treats
differently from what the author likely meant is reported as a warning.
"""
from collections.abc import Iterable

from tritonkit.triton.model_config import pb
from tritonkit.validate.findings import Finding

_DELAY = pb.ModelQueuePolicy.DELAY


def check_scheduling(name: str, c: pb.ModelConfig) -> list[Finding]:
    """Findings on max_batch_size, dynamic batching, the response cache and TRITON_BATCH_STRATEGY_PATH."""
    found: list[Finding] = []
    if c.max_batch_size < 0:
        found.append(Finding(name, "max_batch_size", f"{c.max_batch_size} is negative",
                             "use 0 (no batch dimension) or a positive batch size"))
    if c.HasField("dynamic_batching"):
        found += _check_dynamic(name, c)
    if c.HasField("sequence_batching") and c.response_cache.enable:
        found.append(Finding(name, "response_cache.enable", "the response cache does not support sequence batching",
                             "set response_cache.enable: false"))
    if c.model_transaction_policy.decoupled and c.response_cache.enable:
        found.append(Finding(name, "response_cache.enable", "the response cache does not support decoupled models",
                             "set response_cache.enable: false"))
    if c.HasField("sequence_batching") and "TRITON_BATCH_STRATEGY_PATH" in c.parameters:
        found.append(Finding(name, "parameters.TRITON_BATCH_STRATEGY_PATH", "a custom batching strategy cannot be "
                             "used with sequence batching", "remove the parameter or use dynamic_batching"))
    return found


def preferred_size_findings(name: str, field: str, sizes: Iterable[int], max_batch_size: int) -> list[Finding]:
    """Preferred batch sizes must be positive and at most max_batch_size (dynamic and sequence 'oldest')."""
    found = []
    for size in sizes:
        if size <= 0:
            found.append(Finding(name, f"{field}.preferred_batch_size", f"{size} is not a batch size",
                                 "use sizes >= 1"))
        elif size > max_batch_size:
            found.append(Finding(name, f"{field}.preferred_batch_size", f"{size} > max_batch_size {max_batch_size}",
                                 "lower it or raise max_batch_size"))
    return found


def _check_dynamic(name: str, c: pb.ModelConfig) -> list[Finding]:
    d = c.dynamic_batching
    found = preferred_size_findings(name, "dynamic_batching", d.preferred_batch_size, c.max_batch_size)
    if c.max_batch_size == 0 and not d.preferred_batch_size:
        found.append(Finding(name, "dynamic_batching", "batching is configured but max_batch_size is 0, so Triton runs "
                             "every request alone", "set max_batch_size > 0 or remove dynamic_batching", "warning"))
    levels = d.priority_levels
    if levels:
        if d.default_priority_level == 0:
            found.append(Finding(name, "dynamic_batching.default_priority_level", "must be set when "
                                 f"priority_levels is set ({levels})", "set it between 1 and priority_levels"))
        elif d.default_priority_level > levels:
            found.append(Finding(name, "dynamic_batching.default_priority_level", f"{d.default_priority_level} > "
                                 f"priority_levels {levels}", "use a level between 1 and priority_levels"))
        for level in sorted(d.priority_queue_policy):
            if not 1 <= level <= levels:
                found.append(Finding(name, f"dynamic_batching.priority_queue_policy.{level}",
                                     f"priority level {level} outside 1..{levels} (priority_levels)",
                                     "raise priority_levels or use an existing level"))
    else:
        if d.default_priority_level:
            found.append(Finding(name, "dynamic_batching.default_priority_level", f"{d.default_priority_level} is "
                                 "ignored by Triton because priority_levels is 0", "set priority_levels to the "
                                 "number of levels or remove default_priority_level", "warning"))
        for level in sorted(d.priority_queue_policy):
            found.append(Finding(name, f"dynamic_batching.priority_queue_policy.{level}",
                                 f"a queue policy for level {level} is ignored by Triton because priority_levels is 0",
                                 "set priority_levels or use default_queue_policy", "warning"))
    if d.preserve_ordering:
        if levels > 1:
            found.append(Finding(name, "dynamic_batching.preserve_ordering", "preserve_ordering allows only one "
                                 f"priority level, got priority_levels {levels}",
                                 "set priority_levels to 0 or 1, or remove preserve_ordering"))
        policies = [("default_queue_policy", d.default_queue_policy)]
        policies += [(f"priority_queue_policy.{k}",
                      d.priority_queue_policy[k]) for k in sorted(d.priority_queue_policy)]
        for field, policy in policies:
            if policy.default_timeout_microseconds and policy.timeout_action == _DELAY:
                found.append(Finding(name, f"dynamic_batching.{field}.timeout_action", "DELAY cannot be used with "
                                     "preserve_ordering", "use timeout_action: REJECT or remove preserve_ordering"))
    return found
