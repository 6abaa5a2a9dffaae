"""The export cache key covers every tritonkit module the export child runs, found from the code itself."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tritonkit
from tritonkit.export.cache import child_modules

from .test_cache import export

pytestmark = pytest.mark.slow  # each test hashes a copy of the package twice in export children: seconds

PACKAGE = Path(tritonkit.__file__).resolve().parent
KEY = (
    "from pathlib import Path; import tritonkit; from tritonkit.export.api import cache_payload; "
    "from tritonkit.export.cache import key_of; from tritonkit.export.job import ExportJob; "
    "from tritonkit.spec.export import ExportSpec, SourceSpec; print(tritonkit.__file__); "
    "print(key_of(cache_payload(ExportJob('m', SourceSpec(python='m:build'), ExportSpec(), 4, Path('.')))))"
)


def key_with(package_copy: Path) -> str:
    """The cache key of a fixed job, computed by the tritonkit package at `package_copy` in a fresh process."""
    run = subprocess.run([sys.executable, "-c", KEY], cwd=package_copy.parent, capture_output=True, text=True,
                         timeout=60,
                         env={"PYTHONPATH": str(package_copy.parent), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    imported_from, key = run.stdout.split()
    assert Path(imported_from).resolve().is_relative_to(package_copy.resolve()), imported_from
    return key


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "src" / "tritonkit"
    shutil.copytree(PACKAGE, dest, ignore=shutil.ignore_patterns("__pycache__"), symlinks=True)
    return dest


def test_a_module_the_child_uses_outside_export_changes_the_key(package_copy: Path) -> None:
    before = key_with(package_copy)
    golden = package_copy / "golden.py"
    golden.write_text(golden.read_text() + "\n# a change to the golden-sample writer\n")
    assert key_with(package_copy) != before


def test_a_module_the_child_never_imports_leaves_the_key(package_copy: Path) -> None:
    before = key_with(package_copy)
    health = package_copy / "serve" / "health.py"
    health.write_text(health.read_text() + "\n# serving code, not export code\n")
    assert key_with(package_copy) == before


@pytest.mark.slow  # a real export
def test_closure_holds_every_tritonkit_module_a_real_child_imports(exporter, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Python's own import log (-X importtime) of a real export child, against the closure read from the code."""
    from .test_cache import CODE, save_weights

    (tmp_path / "scaled.py").write_text(CODE.format(scale=2.0))
    save_weights(tmp_path / "scaled.pt", seed=0)
    monkeypatch.setenv("PYTHONPROFILEIMPORTTIME", "1")  # the child inherits the environment
    result = export(exporter, tmp_path)
    assert not result.cache_hit
    log = result.log_path.read_text(errors="replace").splitlines()
    imported = {line.rsplit("|", 1)[-1].strip() for line in log if line.startswith("import time:")}
    ours = {name for name in imported if name == "tritonkit" or name.startswith("tritonkit.")}
    assert {"tritonkit.golden", "tritonkit.export.pipeline", "tritonkit.spec.export"} <= ours
    files = {PACKAGE.joinpath(*name.split(".")[1:]) for name in ours}
    covered = {p.with_suffix("") if p.name != "__init__.py" else p.parent for p in child_modules()}
    assert files <= covered, sorted(str(f) for f in files - covered)
