"""`tritonkit tune X --joint` refuses, in one line naming file, field and fix (exit 2, spec untouched), what it cannot
search: a model that is no pipeline, an LLM engine, a pipeline without knobs, bad options. No server is started."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import run_cli


@pytest.fixture(scope="module")
def classifier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("classifier")
    assert run_cli("init", "--pipeline", "classifier", str(root)).returncode == 0
    return root


def _refused(root: Path, *args: str) -> str:
    before = (root / "tritonkit.yaml").read_text()
    done = run_cli("tune", *args, "--joint", cwd=root, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and (root / "tritonkit.yaml").read_text() == before
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_a_model_that_is_no_pipeline(classifier: Path) -> None:
    line = _refused(classifier, "preprocess")
    assert line.startswith("tritonkit.yaml: models.preprocess: ")
    assert "neither an ensemble nor a BLS model" in line and "tritonkit tune preprocess" in line


def test_unknown_pipeline_and_options(classifier: Path) -> None:
    assert "no model or pipeline named 'clasify'" in _refused(classifier, "clasify")
    assert "classify" in _refused(classifier, "clasify")  # the fix suggests the close name
    assert "--knobs" in _refused(classifier, "classify", "--knobs", "instances,colour")
    assert "--budget: must be positive" in _refused(classifier, "classify", "--budget", "0")


def test_a_pipeline_without_knobs(classifier: Path) -> None:
    line = _refused(classifier, "classify", "--knobs", "threads")  # Python steps without intra_op_thread_count
    assert "models.classify: no step of 'classify' (classify, preprocess, classifier) has a knob" in line


def test_the_llm_engine(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("")
    tensor = {"input": [{"name": "X", "data_type": "TYPE_FP32", "dims": [1]}],
              "output": [{"name": "Y", "data_type": "TYPE_FP32", "dims": [1]}]}
    models = {
        "generate": {"backend": "python", "files": {"model.py": "m.py"}, "parameters": {"kv_cache_bytes": 1 << 20},
                     "model_transaction_policy": {"decoupled": True}, **tensor},
        "chat": {"backend": "python", "files": {"model.py": "m.py"}, "bls": {"calls": ["generate"]},
                 "model_transaction_policy": {"decoupled": True}, **tensor},
    }
    (tmp_path / "tritonkit.yaml").write_text(yaml.safe_dump({"version": 1, "models": models}))
    line = _refused(tmp_path, "chat")
    assert line.startswith("tritonkit.yaml: models.generate.parameters.kv_cache_bytes: ")
    assert "tokens/s under time-to-first-token and inter-token bounds" in line and "by hand" in line
