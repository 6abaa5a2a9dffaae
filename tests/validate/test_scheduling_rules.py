"""max_batch_size, dynamic batching (preferred sizes, priorities, preserve_ordering), response cache, batch strategy."""
from __future__ import annotations

import pytest

from .rule_helpers import Rule, assert_rule, model

SEQ = "sequence_batching {}\n"


def dyn(fields: str, mbs: int = 8) -> str:
    return model(f"dynamic_batching {{{fields}}}\n", head=f'backend: "python"\nmax_batch_size: {mbs}\n')


DELAY = "default_queue_policy {timeout_action: DELAY default_timeout_microseconds: 100}"
RULES = [
    Rule("negative-max-batch-size", model(head='backend: "python"\nmax_batch_size: -2\n'),
         "max_batch_size: -2 is negative; fix: use 0 (no batch dimension) or a positive batch size",
         model(head='backend: "python"\nmax_batch_size: 0\n')),
    Rule("preferred-zero", dyn("preferred_batch_size: [0, 4]"),
         "dynamic_batching.preferred_batch_size: 0 is not a batch size; fix: use sizes >= 1",
         dyn("preferred_batch_size: [2, 4]")),
    Rule("preferred-above-max", dyn("preferred_batch_size: [4, 16]"),
         "dynamic_batching.preferred_batch_size: 16 > max_batch_size 8; fix: lower it or raise max_batch_size",
         dyn("preferred_batch_size: [4, 8]")),
    Rule("preferred-without-batching", dyn("preferred_batch_size: [4]", mbs=0),
         "dynamic_batching.preferred_batch_size: 4 > max_batch_size 0; fix: lower it or raise max_batch_size",
         dyn("preferred_batch_size: [4]")),
    Rule("dynamic-without-batching-is-warning", dyn("", mbs=0),
         "dynamic_batching: batching is configured but max_batch_size is 0, so Triton runs every request alone; fix: "
         "set max_batch_size > 0 or remove dynamic_batching",
         dyn(""), "warning"),
    Rule("default-priority-unset", dyn("priority_levels: 3"),
         "dynamic_batching.default_priority_level: must be set when priority_levels is set (3); fix: set it between 1 "
         "and priority_levels", dyn("priority_levels: 3 default_priority_level: 1")),
    Rule("default-priority-above-levels", dyn("priority_levels: 3 default_priority_level: 5"),
         "dynamic_batching.default_priority_level: 5 > priority_levels 3; fix: use a level between 1 and "
         "priority_levels", dyn("priority_levels: 3 default_priority_level: 3")),
    Rule("queue-policy-level-outside",
         dyn("priority_levels: 3 default_priority_level: 1 priority_queue_policy {key: 4 value: {}}"),
         "dynamic_batching.priority_queue_policy.4: priority level 4 outside 1..3 (priority_levels); fix: raise "
         "priority_levels or use an existing level",
         dyn("priority_levels: 3 default_priority_level: 1 priority_queue_policy {key: 3 value: {}}")),
    Rule("priority-without-levels-is-warning", dyn("default_priority_level: 2"),
         "dynamic_batching.default_priority_level: 2 is ignored by Triton because priority_levels is 0; fix: set "
         "priority_levels to the number of levels or remove default_priority_level",
         dyn("priority_levels: 2 default_priority_level: 2"), "warning"),
    Rule("preserve-ordering-levels", dyn("preserve_ordering: true priority_levels: 3 default_priority_level: 2"),
         "dynamic_batching.preserve_ordering: preserve_ordering allows only one priority level, got priority_levels 3; "
         "fix: set priority_levels to 0 or 1, or remove preserve_ordering",
         dyn("preserve_ordering: true priority_levels: 1 default_priority_level: 1")),
    Rule("preserve-ordering-delay", dyn(f"preserve_ordering: true {DELAY}"),
         "dynamic_batching.default_queue_policy.timeout_action: DELAY cannot be used with preserve_ordering; fix: use "
         "timeout_action: REJECT or remove preserve_ordering",
         dyn("preserve_ordering: true default_queue_policy {timeout_action: DELAY}")),
    Rule("preserve-ordering-delay-per-level",
         dyn("preserve_ordering: true priority_levels: 1 default_priority_level: 1 priority_queue_policy {key: 1 "
             "value: {timeout_action: DELAY default_timeout_microseconds: 10}}"),
         "dynamic_batching.priority_queue_policy.1.timeout_action: DELAY cannot be used with preserve_ordering; fix: "
         "use timeout_action: REJECT or remove preserve_ordering",
         dyn("priority_levels: 1 default_priority_level: 1 priority_queue_policy {key: 1 value: {timeout_action: DELAY "
             "default_timeout_microseconds: 10}}")),
    Rule("cache-with-sequence", model(SEQ + "response_cache {enable: true}\n"),
         "response_cache.enable: the response cache does not support sequence batching; fix: set "
         "response_cache.enable: false", model("response_cache {enable: true}\n")),
    Rule("cache-with-decoupled", model("model_transaction_policy {decoupled: true}\nresponse_cache {enable: true}\n"),
         "response_cache.enable: the response cache does not support decoupled models; fix: set response_cache.enable: "
         "false", model("model_transaction_policy {decoupled: true}\n")),
    Rule("batch-strategy-with-sequence",
         model(SEQ + 'parameters {key: "TRITON_BATCH_STRATEGY_PATH" value: {string_value: "/opt/b.so"}}\n'),
         "parameters.TRITON_BATCH_STRATEGY_PATH: a custom batching strategy cannot be used with sequence batching; "
         "fix: remove the parameter or use dynamic_batching",
         model('dynamic_batching {}\nparameters {key: "TRITON_BATCH_STRATEGY_PATH" value: {string_value: '
               '"/opt/b.so"}}\n')),
]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_scheduling_rule(rule: Rule) -> None:
    assert_rule(rule)
