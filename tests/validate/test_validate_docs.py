"""`tritonkit validate` on hand-written repositories in the style of Triton's docs, then on broken copies.

The repositories live in tests/data/triton_docs/ (see its README). Each broken variant copies one
repository, changes one thing, and expects exit 2 with a first line naming `<dir>/<model>/config.pbtxt`
and the field at fault.
"""
from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from tests.cli.cli_contract import ERROR_LINE, assert_one_line_errors, run_in_process, run_subprocess

DOCS = Path(__file__).resolve().parents[1] / "data" / "triton_docs"

REPOSITORIES = {
    "dynamic_batching": ["priority_scorer", "text_classifier"],
    "sequence_batching": ["accumulate_direct", "accumulate_oldest", "implicit_accumulate"],
    "ensemble": ["classify_image", "image_classifier", "image_preprocess", "label_postprocess"],
    "bls": ["add_sub", "bls_router", "scale"],
    "decoupled": ["repeat_int32", "repeat_stream"],
}


def copy_repository(name: str, tmp_path: Path) -> Path:
    shutil.copytree(DOCS / name, tmp_path / name)
    return tmp_path / name


@pytest.mark.parametrize("repository", sorted(REPOSITORIES))
def test_docs_repository_is_valid(repository: str, tmp_path: Path) -> None:
    copy_repository(repository, tmp_path)
    result = run_subprocess(["validate", repository, "--json"], tmp_path)
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] is True
    assert report["models"] == REPOSITORIES[repository]


def test_docs_configs_use_the_docs_formatting() -> None:
    """The data really is in the docs' style (list forms, bracketed dims), not tritonkit's rendered style."""
    texts = {p.parent.name: p.read_text() for p in DOCS.glob("*/*/config.pbtxt")}
    assert len(texts) == sum(len(models) for models in REPOSITORIES.values())
    assert all("input [" in t for t in texts.values())
    assert any("decoupled: True" in t for t in texts.values())
    assert any("name:" not in t.split("input [")[0] for t in texts.values()), (
        "some config should leave the name to its folder"
    )
    for text in texts.values():
        text_format.Parse(text, model_config_pb2.ModelConfig())


@dataclass
class Variant:
    id: str
    repository: str
    model: str
    breaks: Callable[[Path], None]  # gets the model folder of the copy
    field: str
    line_of: str | None = None  # for parse errors: the field is reported with the line holding this text
    contains: tuple[str, ...] = ()
    exact: str | None = None  # the whole first line after `<dir>/<model>/config.pbtxt: `
    reported: str | None = None  # the model whose config is named, when not the broken one (ensembles)


def edit(old: str, new: str) -> Callable[[Path], None]:
    """Replaces `old` (which must occur exactly once) in the model's config.pbtxt."""

    def apply(model_dir: Path) -> None:
        path = model_dir / "config.pbtxt"
        text = path.read_text()
        assert text.count(old) == 1, f"{old!r} must occur once in {path}"
        path.write_text(text.replace(old, new))

    return apply


def remove(rel: str) -> Callable[[Path], None]:
    def apply(model_dir: Path) -> None:
        target = model_dir / rel
        shutil.rmtree(target) if target.is_dir() else target.unlink()

    return apply


SECOND_STATE = """  state [
    {
      input_name: "A_in"
      output_name: "Z_out"
      data_type: TYPE_INT32
      dims: [ 1 ]
      initial_state: { data_type: TYPE_INT32 dims: [ 1 ] zero_data: true name: "zeros" }
    },
"""

VARIANTS = [
    Variant("typo-top-level-field", "dynamic_batching", "text_classifier",
            edit("max_batch_size: 8", "max_batch_sise: 8"),
            "max_batch_sise", line_of="max_batch_sise", contains=("did you mean 'max_batch_size'?",)),
    Variant("typo-nested-field", "dynamic_batching", "text_classifier",
            edit("max_queue_delay_microseconds", "max_queue_delay_microsecond"),
            "dynamic_batching.max_queue_delay_microsecond", line_of="max_queue_delay_microsecond",
            exact="unknown field 'max_queue_delay_microsecond' in ModelDynamicBatching; did you mean "
                  "'max_queue_delay_microseconds'?"),
    Variant("typo-enum-value", "sequence_batching", "accumulate_direct",
            edit("CONTROL_SEQUENCE_READY", "CONTROL_SEQUENCE_READDY"),
            "sequence_batching.control_input.control.kind", line_of="CONTROL_SEQUENCE_READDY",
            contains=("CONTROL_SEQUENCE_READDY",)),
    Variant("typo-bool-value", "decoupled", "repeat_int32", edit("decoupled: True", "decoupled: Ture"),
            "model_transaction_policy.decoupled", line_of="decoupled: Ture", contains=('Expected "true" or "false"',)),
    Variant("preferred-above-max", "dynamic_batching", "text_classifier",
            edit("preferred_batch_size: [ 4, 8 ]", "preferred_batch_size: [ 4, 16 ]"),
            "dynamic_batching.preferred_batch_size", exact="16 > max_batch_size 8; lower it or raise max_batch_size"),
    Variant("oldest-preferred-above-max", "sequence_batching", "accumulate_oldest",
            edit("preferred_batch_size: [ 2, 4 ]", "preferred_batch_size: [ 2, 16 ]"),
            "sequence_batching.oldest.preferred_batch_size", contains=("16 > max_batch_size 8",)),
    Variant("dangling-ensemble-tensor", "ensemble", "classify_image",
            edit('key: "INPUT"\n        value: "preprocessed_image"',
                 'key: "INPUT"\n        value: "preprocessed_img"'),
            "ensemble_scheduling.step[1].input_map.INPUT",
            contains=("'preprocessed_img' is neither an ensemble input nor produced",)),
    Variant("ensemble-output-not-produced", "ensemble", "classify_image",
            edit('value: "CLASSIFICATION"', 'value: "label"'),
            "output[0]", contains=("'CLASSIFICATION' is not produced",)),
    Variant("ensemble-step-dtype-mismatch", "ensemble", "label_postprocess",
            edit("data_type: TYPE_FP32", "data_type: TYPE_FP16"),
            "ensemble_scheduling.step[2].input_map.SCORES", reported="classify_image",
            contains=("'label_postprocess' is TYPE_FP16", "TYPE_FP32")),
    Variant("config-name-differs-from-folder", "ensemble", "label_postprocess",
            edit('name: "label_postprocess"', 'name: "label_post"'),
            "name", contains=("'label_post' differs from the directory name 'label_postprocess'",)),
    Variant("missing-version-folder", "ensemble", "image_classifier", remove("1"),
            "version_policy", contains=("no version folder",)),
    Variant("specific-version-missing", "dynamic_batching", "priority_scorer",
            edit("{ latest: { num_versions: 2 } }", "{ specific: { versions: [ 3 ] } }"),
            "version_policy.specific.versions", contains=("none of versions [3] has a folder (found 1, 2)",)),
    Variant("python-model-without-model-py", "bls", "add_sub", remove("1/model.py"),
            "backend",
            exact="version 1 has no model.py, which the python backend loads; put the model file in add_sub/1/model.py "
                  "(or set default_model_filename)"),
    Variant("priority-default-above-levels", "dynamic_batching", "priority_scorer",
            edit("default_priority_level: 2", "default_priority_level: 3"),
            "dynamic_batching.default_priority_level", contains=("3 > priority_levels 2",)),
    Variant("warmup-dims-mismatch", "dynamic_batching", "priority_scorer",
            edit("dims: [ 8 ]\n        random_data", "dims: [ 7 ]\n        random_data"),
            "model_warmup[0].inputs.FEATURES.dims", contains=("[7] does not fit the input's dims [8]",)),
    Variant("corrid-float", "sequence_batching", "accumulate_oldest",
            edit("data_type: TYPE_STRING", "data_type: TYPE_FP32"),
            "sequence_batching.control_input[2].control[0].data_type", contains=("TYPE_FP32 is not allowed",)),
    Variant("two-end-controls", "sequence_batching", "accumulate_direct",
            edit("kind: CONTROL_SEQUENCE_READY", "kind: CONTROL_SEQUENCE_END"),
            "sequence_batching.control_input", contains=("CONTROL_SEQUENCE_END is given 2 times",)),
    Variant("implicit-state-order", "sequence_batching", "implicit_accumulate",
            edit("  state [\n    {\n", SECOND_STATE + "    {\n"),
            "sequence_batching.state", contains=("'A_in'->'Z_out'", "'INPUT_STATE'->'OUTPUT_STATE'")),
]

IN_SUBPROCESS = {"typo-nested-field", "preferred-above-max", "missing-version-folder"}


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.id for v in VARIANTS])
def test_broken_docs_repository_is_refused(variant: Variant, tmp_path: Path) -> None:
    repository = copy_repository(variant.repository, tmp_path)
    variant.breaks(repository / variant.model)
    config = repository / variant.model / "config.pbtxt"
    field = variant.field
    if variant.line_of is not None:
        field += (
            f" (line {next(i for i, line in enumerate(config.read_text().splitlines(), 1) if variant.line_of in line)})"
        )
    shown = f"{variant.repository}/{variant.reported or variant.model}/config.pbtxt"
    run = run_subprocess if variant.id in IN_SUBPROCESS else run_in_process
    lines = assert_one_line_errors(run(["validate", variant.repository], tmp_path), f"{shown}: {field}: ")
    for text in variant.contains:
        assert text in lines[0]
    if variant.exact is not None:
        assert lines[0] == f"{shown}: {field}: {variant.exact}"


def test_decoupled_step_in_plain_ensemble_warns(tmp_path: Path) -> None:
    """Triton marks an ensemble with a decoupled step decoupled by itself: tritonkit warns and passes."""
    repository = copy_repository("decoupled", tmp_path)
    edit("model_transaction_policy { decoupled: true }\n", "")(repository / "repeat_stream")
    result = run_in_process(["validate", "decoupled"], tmp_path)
    assert result.exit_code == 0, result.stderr
    assert result.stderr.startswith("warning: decoupled/repeat_stream/config.pbtxt: "
                                    "model_transaction_policy.decoupled: decoupled step 'repeat_int32'")


def test_every_problem_of_a_repository_is_reported(tmp_path: Path) -> None:
    """Two models broken at once: both are reported, each on its own located line."""
    repository = copy_repository("ensemble", tmp_path)
    edit('name: "label_postprocess"', 'name: "label_post"')(repository / "label_postprocess")
    remove("1")(repository / "image_classifier")
    result = run_in_process(["validate", "ensemble"], tmp_path)
    lines = assert_one_line_errors(result, "ensemble/")
    fields = {ERROR_LINE.match(line)["file"] + " " + ERROR_LINE.match(line)["field"] for line in lines}
    assert fields == {"ensemble/image_classifier/config.pbtxt version_policy",
                      "ensemble/label_postprocess/config.pbtxt name"}


def test_model_folder_without_config_is_refused(tmp_path: Path) -> None:
    repository = copy_repository("bls", tmp_path)
    (repository / "scale" / "config.pbtxt").unlink()
    lines = assert_one_line_errors(run_in_process(["validate", "bls"], tmp_path),
                                   "bls/scale: config.pbtxt: is missing; ")
    assert len(lines) == 1
