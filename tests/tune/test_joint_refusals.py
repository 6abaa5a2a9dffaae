"""`tritonkit tune X --joint` refuses, in one line naming file, field and fix (exit 2, spec untouched), what it cannot
search: a model that is no pipeline, an LLM pipeline its streaming clients cannot drive, a pipeline without knobs, bad
options. No server is started."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import run_cli

pytestmark = pytest.mark.slow  # `tritonkit tune` through the CLI: seconds each


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
    assert "--max-tokens: must be positive" in _refused(classifier, "classify", "--max-tokens", "0")
    line = _refused(classifier, "classify", "--max-ttft-ms", "500")  # an LLM bound on a pipeline without an LLM
    assert "--max-ttft-ms: 'classify' runs no LLM engine" in line and "--max-p99-ms" in line


def test_a_pipeline_without_knobs(classifier: Path) -> None:
    line = _refused(classifier, "classify", "--knobs", "threads")  # Python steps without intra_op_thread_count
    assert "models.classify: no step of 'classify' (classify, preprocess, classifier) has a knob" in line


def test_an_llm_pipeline_without_text_in(tmp_path: Path) -> None:
    """An LLM engine is searched (tokens/s under TTFT and inter-token bounds, tests/tune/test_joint_llm.py), through
    a pipeline taking text and streaming ids; one that does not is refused, naming what the clients need."""
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
    assert line.startswith("tritonkit.yaml: models.chat: 'chat' runs the LLM engine 'generate' but has no text_input")
    assert "tritonkit tune llm --joint" in line
