"""A port option outside 1-65535 is one usage line naming the option (was an OverflowError traceback from bind)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.slow  # `tritonkit serve` in a child process per case: seconds each


@pytest.mark.parametrize("option", ["--http-port", "--grpc-port", "--metrics-port"])
@pytest.mark.parametrize("port", ["99999", "0", "-1"])
def test_a_port_outside_the_tcp_range_is_one_line_naming_the_option(option: str, port: str, tmp_path: Path) -> None:
    (tmp_path / "model_repository").mkdir()
    result = run_cli("serve", option, port, cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.splitlines() == [
        f"tritonkit serve: {option}: {port} is not in the range 1<=x<=65535; see 'tritonkit serve --help'"
    ], result.stderr
    assert result.stdout == "" and sorted(p.name for p in tmp_path.iterdir()) == [
        "model_repository"
    ]  # nothing started or written
