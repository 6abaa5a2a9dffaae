"""tritonkit.Dockerfile: the official image plus what the Python models need, pip `requirements` and Debian
`system_packages` (apt-get, unpinned, no recommends, lists removed); a bad package name is one line, nothing written."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.cli_contract import assert_one_line_errors, run_in_process, snapshot
from tests.conftest import run_cli
from tritonkit.package_files import package_path

from .test_compose_defaults import write_project

IMAGE = "nvcr.io/nvidia/tritonserver:24.10-py3"
APT = ("RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends {} "
       "&& rm -rf /var/lib/apt/lists/*")


def project_with(root: Path, **fields: Any) -> Path:
    """The one-model compose test project with `fields` added to its model."""
    write_project(root, {})
    spec = yaml.safe_load((root / "tritonkit.yaml").read_text())
    spec["models"]["echo"].update(fields)
    (root / "tritonkit.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return root


def built_dockerfile(root: Path) -> list[str]:
    outcome = run_in_process(["build"], root)
    assert outcome.exit_code == 0, outcome.stderr
    return (root / "tritonkit.Dockerfile").read_text().splitlines()


def test_system_packages_are_installed_before_the_pip_requirements(tmp_path: Path) -> None:
    lines = built_dockerfile(project_with(tmp_path, system_packages=["libespeak-ng1", "libsndfile1", "libespeak-ng1"],
                                          requirements=["soundfile"]))
    assert lines[1:] == [f"FROM {IMAGE}", APT.format("libespeak-ng1 libsndfile1"),
                         "RUN pip install --no-cache-dir 'soundfile'"]
    compose = yaml.safe_load((tmp_path / "docker-compose.yml").read_text())
    assert compose["services"]["triton"]["build"] == {"context": ".", "dockerfile": "tritonkit.Dockerfile"}


def test_system_packages_alone_make_a_dockerfile(tmp_path: Path) -> None:
    assert built_dockerfile(project_with(tmp_path, system_packages=["g++-12", "libc6"]))[1:] == [
        f"FROM {IMAGE}",
        APT.format("g++-12 libc6"),
    ]


def test_no_packages_no_dockerfile(tmp_path: Path) -> None:
    assert run_in_process(["build"], project_with(tmp_path)).exit_code == 0
    assert not (tmp_path / "tritonkit.Dockerfile").exists()
    assert "build" not in yaml.safe_load((tmp_path / "docker-compose.yml").read_text())["services"]["triton"]


@pytest.mark.parametrize("name",
                         ["libespeak-ng1=1.51", "LibEspeak", "espeak ng", "-y", "x", "libfoo && curl evil.sh", "$(id)",
                          "pkg:amd64"])
def test_a_bad_package_name_is_one_line_and_nothing_is_written(tmp_path: Path, name: str) -> None:
    project_with(tmp_path, system_packages=["libespeak-ng1", name])
    before = snapshot(tmp_path)
    lines = assert_one_line_errors(run_in_process(["build"], tmp_path), "tritonkit.yaml: models.echo.system_packages: ")
    assert lines == [f"tritonkit.yaml: models.echo.system_packages: {name!r} is not a Debian package name; write the "
                     "bare name "
                     "(lowercase letters, digits, '+', '-', '.', no version or options), e.g. libespeak-ng1"]
    assert snapshot(tmp_path) == before


def test_the_tts_frontend_brings_espeak_ng() -> None:
    """The shipped pipeline spec asks for the library its frontend loads (libespeak-ng.so.1 is in libespeak-ng1)."""
    spec = yaml.safe_load(package_path("ensembles/tts.yaml").read_text())
    assert spec["models"]["frontend"]["system_packages"] == ["libespeak-ng1"]


@pytest.mark.slow  # builds through the CLI: seconds
def test_the_schema_describes_system_packages_with_the_name_pattern() -> None:
    result = run_cli("schema")
    assert result.returncode == 0, result.stderr
    field = json.loads(result.stdout)["$defs"]["ModelSpec"]["properties"]["system_packages"]
    assert (
        field["items"] == {"type": "string", "pattern": "^[a-z0-9][a-z0-9+.-]+$"} and "apt-get" in field["description"]
    )
