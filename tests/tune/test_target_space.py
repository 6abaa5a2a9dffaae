"""What `tritonkit tune NAME` profiles, and the search space it derives from the spec."""
from __future__ import annotations

from pathlib import Path

import pytest

from tritonkit.errors import TritonkitError
from tritonkit.spec.loader import load_project
from tritonkit.tune.analyzer.space import fit_budget, model_space, powers_of_two
from tritonkit.tune.targets.model import MAX_COMPOSING, resolve_target

STEP_MODEL = """
  {name}:
    backend: python
    max_batch_size: 8
    input: [{{name: X, data_type: TYPE_FP32, dims: [4]}}]
    output: [{{name: Y, data_type: TYPE_FP32, dims: [4]}}]
    files: {{model.py: models/{code}.py}}
"""


def project(tmp_path: Path, models: str, code: dict[str, str] | None = None) -> Path:
    (tmp_path / "models").mkdir(exist_ok=True)
    for name, text in (code or {}).items():
        (tmp_path / "models" / f"{name}.py").write_text(text)
    (tmp_path / "models" / "step.py").write_text("# a step\n")
    spec = tmp_path / "tritonkit.yaml"
    spec.write_text("version: 1\nmodels:" + models)
    return spec


def ensemble(name: str, steps: list[str]) -> str:
    listed = "".join(f"\n        - {{model_name: {s}, input_map: {{X: X}}, output_map: {{Y: Y}}}}" for s in steps)
    return f"""
  {name}:
    platform: ensemble
    max_batch_size: 8
    input: [{{name: X, data_type: TYPE_FP32, dims: [4]}}]
    output: [{{name: Y, data_type: TYPE_FP32, dims: [4]}}]
    ensemble_scheduling:
      step:{listed}
"""


def test_plain_model_and_unknown_name(tmp_path: Path) -> None:
    spec = project(tmp_path, STEP_MODEL.format(name="alpha", code="step"))
    assert resolve_target(load_project(spec), "alpha").kind == "model"
    with pytest.raises(TritonkitError, match="no model or pipeline named 'alpah'.*did you mean 'alpha'"):
        resolve_target(load_project(spec), "alpah")


def test_ensemble_lists_its_steps_once(tmp_path: Path) -> None:
    models = "".join(STEP_MODEL.format(name=n, code="step") for n in ("a", "b")) + ensemble("pipe", ["a", "b", "a"])
    target = resolve_target(load_project(project(tmp_path, models)), "pipe")
    assert (target.kind, target.composing, target.models) == ("ensemble", ("a", "b"), ("pipe", "a", "b"))


def test_too_many_composing_models_is_one_clear_line(tmp_path: Path) -> None:
    names = [f"m{i}" for i in range(MAX_COMPOSING + 1)]
    models = "".join(STEP_MODEL.format(name=n, code="step") for n in names) + ensemble("big", names)
    with pytest.raises(TritonkitError) as err:
        resolve_target(load_project(project(tmp_path, models)), "big")
    assert err.value.problem == ("ensemble pipeline 'big' has 5 composing models (m0, m1, m2, m3, m4) but "
                                 "Model Analyzer profiles at most 4")
    assert "tritonkit tune MODEL" in err.value.fix


def test_nested_ensemble_is_refused(tmp_path: Path) -> None:
    models = STEP_MODEL.format(name="a", code="step") + ensemble("inner", ["a"]) + ensemble("outer", ["inner"])
    with pytest.raises(TritonkitError, match="contains the ensemble 'inner'.*nested ensembles"):
        resolve_target(load_project(project(tmp_path, models)), "outer")


def test_bls_model_is_tuned_with_the_models_it_declares(tmp_path: Path) -> None:
    code = {"router": 'REQ = dict(model_name="scorer")\n'}   # naming a model in code is not a declaration
    models = STEP_MODEL.format(name="scorer", code="step") + STEP_MODEL.format(name="router", code="router")
    assert resolve_target(load_project(project(tmp_path, models, code)), "router").kind == "model"
    declared = models + "    bls: {calls: [scorer]}\n"
    target = resolve_target(load_project(project(tmp_path, declared, code)), "router")
    assert (target.kind, target.composing) == ("bls", ("scorer",))


def test_sequence_and_decoupled_models_are_refused(tmp_path: Path) -> None:
    seq = STEP_MODEL.format(name="s", code="step") + "    sequence_batching: {direct: {}}\n"
    with pytest.raises(TritonkitError, match="sequence batching"):
        resolve_target(load_project(project(tmp_path, seq)), "s")


def test_quick_space_walks_powers_of_two_to_twice_the_spec(tmp_path: Path) -> None:
    spec = load_project(project(tmp_path, STEP_MODEL.format(name="a", code="step"))).models["a"]
    space = model_space("a", spec, "quick", gpu=False, max_instances=3, max_batch=None)
    assert space.instance_counts == (1, 2, 3) and space.max_batch_sizes == (1, 2, 4, 8, 16)
    assert space.delays_us == (0,) and space.preferred_sizes == ((),)
    unbatched = spec.model_copy(update={"max_batch_size": 0})
    assert not model_space("a", unbatched, "quick", False, 2, None).batches


def test_brute_space_and_budget_trimming(tmp_path: Path) -> None:
    spec = load_project(project(tmp_path, STEP_MODEL.format(name="a", code="step"))).models["a"]
    space = model_space("a", spec, "brute", gpu=False, max_instances=2, max_batch=32)
    assert space.max_batch_sizes == (4, 8, 16, 32) and space.preferred_sizes == ((), (4,))
    assert space.combinations() == 2 * 4 * 3 * 2
    trimmed, note = fit_budget(space, budget_minutes=10)
    assert trimmed.combinations() < space.combinations() and "trimmed from 48" in note
    same, none = fit_budget(space, budget_minutes=10_000)
    assert same == space and none is None


def test_powers_of_two_include_the_top() -> None:
    assert powers_of_two(1, 12) == (1, 2, 4, 8, 12)
    assert powers_of_two(4, 4) == (4,)
