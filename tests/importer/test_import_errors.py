"""`tritonkit import` refuses what it cannot reproduce, with one line naming the model and field, writing nothing."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, run_cli

from .test_import_roundtrip import assert_same_repository, import_and_build

pytestmark = pytest.mark.slow  # `tritonkit import` (and build) in child processes: seconds each

DOCS = REPO_ROOT / "tests" / "data" / "triton_docs"


def broken_copy(tmp_path: Path, repository: str, model: str, extra: str) -> Path:
    copy = tmp_path / repository
    shutil.copytree(DOCS / repository, copy)
    config = copy / model / "config.pbtxt"
    config.write_text(config.read_text() + extra)
    return copy


@pytest.mark.parametrize(("extra", "field"), [
    ('model_repository_agents { agents [ { name: "checksum" } ] }\n', "model_repository_agents"),
    ("optimization { cuda { graphs: true graph_spec [ { batch_size: 4 } ] } }\n", "optimization.cuda.graph_spec"),
    ('metric_tags { key: "team" value: "search" }\n', "metric_tags"),
])
def test_a_setting_the_spec_cannot_hold_is_one_line_and_nothing_is_written(
    tmp_path: Path, extra: str, field: str
) -> None:
    repository = broken_copy(tmp_path, "bls", "scale", extra)
    result = run_cli("import", str(repository), "-o", "out/tritonkit.yaml", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        f"bls/scale/config.pbtxt: {field}: tritonkit.yaml has no field for this "
        "setting; "
        "remove it from config.pbtxt to import this model, or keep serving it from a "
        "hand-written repository"
    ]
    assert not (tmp_path / "out").exists()


def test_a_model_without_config_is_refused(tmp_path: Path) -> None:
    repository = tmp_path / "bls"
    shutil.copytree(DOCS / "bls", repository)
    (repository / "scale" / "config.pbtxt").unlink()
    result = run_cli("import", str(repository), "-o", "out/tritonkit.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("bls/scale: config.pbtxt: is missing;"), result.stderr
    assert not (tmp_path / "out").exists()


def test_existing_files_are_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "tritonkit.yaml").write_text("# mine\n")
    result = run_cli("import", str(DOCS / "bls"), "-o", "out/tritonkit.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("out/tritonkit.yaml: already exists;"), result.stderr
    assert (tmp_path / "out" / "tritonkit.yaml").read_text() == "# mine\n"
    assert not (tmp_path / "out" / "models").exists()


def test_importing_next_to_the_repository_would_let_build_replace_it(tmp_path: Path) -> None:
    shutil.copytree(DOCS / "bls", tmp_path / "model_repository")
    result = run_cli("import", "model_repository", cwd=tmp_path)
    assert result.returncode == 2
    assert "would replace the repository being imported" in result.stderr
    assert not (tmp_path / "tritonkit.yaml").exists()


def test_the_comparison_catches_a_changed_setting(tmp_path: Path) -> None:
    """Guards the round-trip test itself: a rebuilt repository that differs in one value must fail it."""
    project = tmp_path / "project"
    import_and_build(DOCS / "dynamic_batching", project)
    spec = project / "tritonkit.yaml"
    spec.write_text(spec.read_text().replace("max_queue_delay_microseconds: 100", "max_queue_delay_microseconds: 101"))
    assert run_cli("build", cwd=project).returncode == 0
    with pytest.raises(AssertionError, match="text_classifier"):
        assert_same_repository(DOCS / "dynamic_batching", project / "model_repository")


def test_version_files_must_name_a_listed_version(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("# model\n")
    (tmp_path / "tritonkit.yaml").write_text(
        "version: 1\nmodels:\n  m:\n    backend: python\n    input: [{name: X, data_type: fp32, dims: [1]}]\n"
        "    output: [{name: Y, data_type: fp32, dims: [1]}]\n    files: {model.py: m.py}\n    version_files: {3: "
        "{model.py: m.py}}\n")
    result = run_cli("build", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == ["tritonkit.yaml: models.m: version_files names version 3, which is not in "
                                          "versions [1]; add it to versions or remove its files"]
    assert not (tmp_path / "model_repository").exists()
