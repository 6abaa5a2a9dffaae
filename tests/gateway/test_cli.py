"""`tritonkit gateway` at its edge, without a server: bad settings are one line (exit 2, no traceback), keys come
from the variable and the file, and binding beyond loopback warns (sharper without a key)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli
from tritonkit.gateway.server import api_keys, exposure_warning


def _one_line(result) -> str:
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.slow  # the gateway CLI in child processes: seconds
def test_bad_settings_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "tritonkit.yaml").write_text("version: 1\ngateway:\n  prot: 9000\n")
    assert "gateway.prot: unknown key 'prot'; did you mean 'port'?" in _one_line(
        run_cli("gateway", "--triton", "x:1", cwd=tmp_path)
    )
    (tmp_path / "tritonkit.yaml").write_text("version: 1\ngateway:\n  models: {m: {pipeline: vision}}\n")
    assert "gateway.models.m.pipeline" in _one_line(run_cli("gateway", "--triton", "x:1", cwd=tmp_path))
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "--model: 'smol' is not ID=PIPELINE" in _one_line(
        run_cli("gateway", "--triton", "x:1", "--model", "smol", cwd=empty)
    )
    assert "models.x.pipeline" in _one_line(run_cli("gateway", "--triton", "x:1", "--model", "x=foo", cwd=empty))
    assert "no Triton server is recorded" in _one_line(run_cli("gateway", cwd=empty))
    assert "cannot read the API key file" in _one_line(
        run_cli("gateway", "--triton", "x:1", "--api-key-file", "missing.txt", cwd=empty)
    )


def test_keys_from_the_variable_and_the_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MY_KEYS", " a , b ,")
    keys = tmp_path / "keys.txt"
    keys.write_text("# one per line\nc\n\n  d  \n")
    assert api_keys("MY_KEYS", keys) == {"a", "b", "c", "d"}
    monkeypatch.delenv("MY_KEYS")
    assert api_keys("MY_KEYS", None) == frozenset()


def test_beyond_loopback_warns_and_names_the_missing_key() -> None:
    assert exposure_warning("127.0.0.1", frozenset()) is None and exposure_warning("localhost", frozenset()) is None
    open_one = exposure_warning("0.0.0.0", frozenset())
    assert open_one is not None and "every interface" in open_one and "no API key" in open_one
    guarded = exposure_warning("10.0.0.5", frozenset({"secret-value"}))
    assert (
        guarded is not None
        and "10.0.0.5" in guarded
        and "need one of its API keys" in guarded
        and "secret-value" not in guarded
    )
