"""instance_group: GPUs on CPU/MODEL groups, negative GPU ids, TensorRT profiles; counts below 1 are Triton's
default."""

from __future__ import annotations

import pytest

from .rule_helpers import IO, Rule, assert_rule, lines, model

TRT = 'platform: "tensorrt_plan"\nmax_batch_size: 8\n'


def group(fields: str, head: str = 'backend: "python"\nmax_batch_size: 8\n') -> str:
    return model(f"instance_group [{{{fields}}}]\n", head=head)


RULES = [
    Rule("cpu-with-gpus", group("kind: KIND_CPU gpus: [0]"),
         "instance_group[0].gpus: kind KIND_CPU but gpus [0] are listed; fix: remove gpus or use kind KIND_GPU",
         group("kind: KIND_GPU gpus: [0]")),
    Rule("model-with-gpus", group("kind: KIND_MODEL gpus: [1]"),
         "instance_group[0].gpus: kind KIND_MODEL but gpus [1] are listed; fix: remove gpus or use kind KIND_GPU",
         group("kind: KIND_MODEL")),
    Rule("gpu-negative-id", group("kind: KIND_GPU gpus: [0, -1]"),
         "instance_group[0].gpus: -1 is no GPU id; fix: list GPU ids >= 0", group("kind: KIND_GPU gpus: [0, 1]")),
    Rule("auto-negative-id", group("gpus: [-1]"),
         "instance_group[0].gpus: -1 is no GPU id, so Triton turns the KIND_AUTO group into KIND_CPU with gpus, which "
         "it refuses; fix: list GPU ids >= 0",
         group("gpus: [0]")),
    Rule("profile-not-tensorrt", group('kind: KIND_GPU profile: ["0"]'),
         "instance_group[0].profile: profiles are only supported by TensorRT models (platform tensorrt_plan); fix: "
         "remove profile",
         group('kind: KIND_GPU profile: ["0"]', TRT)),
    Rule("profile-negative", group('kind: KIND_GPU profile: ["-1"]', TRT),
         "instance_group[0].profile: '-1' is not a non-negative integer; fix: give TensorRT profile indexes such as "
         "\"0\"",
         group('kind: KIND_GPU profile: ["1"]', TRT)),
    Rule("profile-not-a-number", group('kind: KIND_GPU profile: ["first"]', TRT),
         "instance_group[0].profile: 'first' is not a non-negative integer; fix: give TensorRT profile indexes such as "
         "\"0\"",
         group('kind: KIND_GPU profile: ["0", "2"]', TRT)),
]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_instance_rule(rule: Rule) -> None:
    assert_rule(rule)


@pytest.mark.parametrize("count", [0, -2])
def test_count_below_one_takes_tritons_default(count: int) -> None:
    text = group(f"kind: KIND_CPU count: {count}")
    assert lines(text, "error") == [] and lines(text, "warning") == []


def test_ensemble_is_not_judged_here() -> None:
    """Ensembles have no instance groups of their own; that rule reports once, at instance_group."""
    text = (
        'platform: "ensemble"\nmax_batch_size: 8\n'
        + IO
        + 'instance_group [{kind: KIND_CPU gpus: [0]}]\nensemble_scheduling {step [{model_name: "a" model_version: -1 '
          'input_map {key: "IN" value: "IN"} output_map {key: "OUT" value: "OUT"}}]}\n'
    )
    assert lines(text, "error") == ["instance_group: an ensemble has no instances of its own; fix: remove "
                                    "instance_group from the ensemble and set it on the composing models"]
