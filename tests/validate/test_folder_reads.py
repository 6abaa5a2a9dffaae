"""A model that reads another model's folder is refused by validate, publish and deploy (Triton from s3:// downloads
each model into a folder of its own); each refusal has an accepted twin that reads only its own folder.

Real repositories on disk, checked through the CLI as a user runs it.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.validate.repo_helpers import tensor, write

IO = tensor("input", "X", "[1]") + tensor("output", "Y", "[1]")
HEAD = 'backend: "python"\nmax_batch_size: 0\n'
ADAPTER = ("import json\nimport os\nimport sys\nfrom pathlib import Path\n\n\nclass TritonPythonModel:\n    def "
           "initialize(self, args):\n")


def model_py(body: str) -> str:
    return ADAPTER + "".join(f"        {line}\n" for line in body.splitlines())


def repository(root: Path, frontend: str, extra: dict[str, str] | None = None, parameters: str = "") -> Path:
    """`speech` holding vocab.json and a `frontend` whose version 1 holds model.py (+ `extra` files)."""
    return write(root / "model_repository", {
        "speech": (HEAD + IO, {"1/model.py": model_py("pass"), "1/vocab.json": "{}"}),
        "frontend": (HEAD + IO + parameters, {"1/model.py": frontend, "1/vocab.json": "{}", **(extra or {})}),
    })


def refusal(root: Path) -> str:
    done = run_cli("validate", "model_repository", cwd=root.parent)
    assert done.returncode == 2, done.stdout
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    return done.stderr.strip()


def accepted(root: Path) -> None:
    done = run_cli("validate", "model_repository", cwd=root.parent)
    assert done.returncode == 0, done.stderr
    assert "2 models valid" in done.stdout


FIX = ("give 'frontend' its own copy in its version folder (files: {vocab.json: model:speech/vocab.json}) and read it "
       "there")


@pytest.mark.slow  # build, publish and deploy through the CLI: seconds each
@pytest.mark.parametrize(("reads", "code"), [
    ('vocab = Path(args["model_repository"]).parent / "speech" / "1" / "vocab.json"',
     "Path(args['model_repository']).parent"),
    ('vocab = os.path.join(args["model_repository"], "..", "speech", "1", "vocab.json")',
     "os.path.join(args['model_repository'], '..', 'speech', '1', 'vocab.json')"),
    ('vocab = os.path.join(os.path.dirname(args["model_repository"]), "speech/1/vocab.json")',
     "os.path.dirname(args['model_repository'])"),
    ('vocab = Path(__file__).resolve().parents[2] / "speech" / "1" / "vocab.json"',
     "Path(__file__).resolve().parents[2]"),
])
def test_model_py_reading_a_siblings_file_is_refused_naming_both_models_and_the_file(
    tmp_path: Path, reads: str, code: str
) -> None:
    line = refusal(repository(tmp_path, model_py(reads)))
    assert line.startswith(
        "model_repository/frontend/config.pbtxt: files: model 'frontend' reads vocab.json from "
        "model 'speech''s "
        f"folder at model_repository/frontend/1/model.py:9 ({code}"
    ), line
    assert line.endswith(f"which Triton from s3:// downloads apart from it; {FIX}")


@pytest.mark.slow  # build, publish and deploy through the CLI: seconds each
@pytest.mark.parametrize("reads", [
    'vocab = Path(args["model_repository"]) / args["model_version"] / "vocab.json"',
    'vocab = os.path.join(args["model_repository"], args["model_version"], "vocab.json")',
    'vocab = Path(__file__).resolve().parent / "vocab.json"',
    'folder = Path(args["model_repository"]) / args["model_version"]\nvocab = folder / "vocab.json"\nshown = '
    'vocab.parent.parent',
    'sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))',
    'import threading\nworker = threading.Thread(target=print)\nworker.start()\nworker.join(timeout=5)',  # no path
])
def test_the_twin_reading_its_own_folder_is_accepted(tmp_path: Path, reads: str) -> None:
    accepted(repository(tmp_path, model_py(reads)))


HELPER_ABOVE = (
    "from pathlib import Path\n\n\ndef folder_of(model_dir, model):\n    return Path(model_dir).parent / model / '1'\n"
)
HELPER_OWN = ("from pathlib import Path\n\n\ndef folder_of(model_dir, version):\n    path = Path(model_dir) / version "
              "/ 'vocab.json'\n    if not path.is_file():\n        raise FileNotFoundError(f'{path.parent} has no "
              "vocab.json')\n    return path.parent\n")


def test_a_helper_in_another_file_given_the_model_folder_is_followed(tmp_path: Path) -> None:
    calls = ('sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))\nfrom lib.paths import folder_of\nvocab = '
             'folder_of(args["model_repository"], "speech") / "vocab.json"')
    root = repository(tmp_path / "above", model_py(calls), {"1/lib/__init__.py": "", "1/lib/paths.py": HELPER_ABOVE})
    assert refusal(root).startswith("model_repository/frontend/config.pbtxt: files: model 'frontend' reads vocab.json "
                                    "from model 'speech''s folder at model_repository/frontend/1/lib/paths.py:5 "
                                    "(Path(model_dir).parent)")
    own = calls.replace('"speech"', 'args["model_version"]')
    accepted(repository(tmp_path / "own", model_py(own), {"1/lib/__init__.py": "", "1/lib/paths.py": HELPER_OWN}))


def test_a_parameter_naming_the_sibling_to_read_from_is_refused(tmp_path: Path) -> None:
    reads = 'vocab = Path(args["model_repository"]) / args["model_version"] / "vocab.json"'
    root = repository(tmp_path / "named", model_py(reads),
                      parameters='parameters { key: "vocab_models" value { string_value: "speech acoustic" } }\n')
    assert refusal(root) == ("model_repository/frontend/config.pbtxt: parameters.vocab_models: model 'frontend' reads "
                             "vocab.json from model 'speech''s folder, which Triton from s3:// downloads apart from "
                             "it; give 'frontend' its own copy in its version folder (files: {vocab.json: "
                             "model:speech/vocab.json}) and drop parameter vocab_models")
    accepted(repository(tmp_path / "own", model_py(reads),
                        parameters='parameters { key: "vocab_models" value { string_value: "frontend" } }\n'))


@pytest.mark.slow  # build, publish and deploy through the CLI: seconds each
def test_publish_and_deploy_refuse_it_too_and_write_nothing(tmp_path: Path) -> None:
    root = repository(tmp_path,
                      model_py('vocab = Path(args["model_repository"]).parent / "speech" / "1" / "vocab.json"'))
    published = run_cli("publish", str(tmp_path / "published"), "-r", str(root), cwd=tmp_path)
    assert (
        published.returncode == 2
        and "model 'frontend' reads vocab.json from model 'speech''s folder" in published.stderr
    )
    assert len(published.stderr.strip().splitlines()) == 1 and not (tmp_path / "published").exists()
    (tmp_path / "tritonkit.yaml").write_text("version: 1\nmodels:\n  speech:\n    backend: python\n    files: "
                                             "{model.py: m.py}\n")
    (tmp_path / "m.py").write_text("")
    deployed = run_cli("deploy", "k8s", "--repository", "s3://bucket/models", "--repository-dir", str(root),
                       cwd=tmp_path)
    assert (
        deployed.returncode == 2 and "model 'frontend' reads vocab.json from model 'speech''s folder" in deployed.stderr
    ), deployed.stderr
    assert len(deployed.stderr.strip().splitlines()) == 1 and not (tmp_path / "deploy").exists()


def test_reading_a_siblings_config_names_the_sibling_the_code_names(tmp_path: Path) -> None:
    """The old asr_stream read acoustic's config.pbtxt for receptive_frames; every model has a config.pbtxt, so the
    sibling named is the one the code's strings name, not the first in the folder."""
    reads = 'config = Path(args["model_repository"]).parent / "speech" / "config.pbtxt"'
    root = repository(tmp_path, model_py(reads))
    write(root, {"aaa": (HEAD + IO, {"1/model.py": model_py("pass")})})
    assert refusal(root).startswith("model_repository/frontend/config.pbtxt: files: model 'frontend' reads "
                                    "config.pbtxt from model 'speech''s folder at "
                                    "model_repository/frontend/1/model.py:9")
