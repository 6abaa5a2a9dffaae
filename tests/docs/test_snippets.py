"""Every runnable block of README.md and docs/ runs as written (see tests/docs/snippets.py for the marker).

One test per page: its blocks run in order in a fresh folder and each must exit 0. Pages whose blocks start
the embedded Triton are marked `server` (and `slow`); `<!-- runnable: slow -->` marks a block that takes long.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.docs.snippets import Reader, environment, pages, snippets, stop_servers

RUNNABLE = {page: found for page in pages() if (found := snippets(page))}


def _param(page: Path) -> object:
    tags = {tag for s in RUNNABLE[page] for tag in s.tags}
    marks = [pytest.mark.server] * ("server" in tags) + [pytest.mark.slow] * bool(tags & {"server", "slow"})
    return pytest.param(page, id=str(page.relative_to(REPO_ROOT)), marks=marks)


def test_the_docs_have_runnable_blocks_for_the_cheap_commands() -> None:
    """The marker is in use where it matters: init, build and validate run from the pages that teach them."""
    code = "".join(s.code for found in RUNNABLE.values() for s in found)
    for command in ("tritonkit init", "tritonkit build", "tritonkit validate", "--help", "tritonkit schema"):
        assert command in code, f"no runnable block runs {command!r}"
    assert any(s.lang == "python" for found in RUNNABLE.values() for s in found), "no runnable python block"


@pytest.mark.slow  # runs every page's shell blocks (init, build, deploy...): minutes in all
@pytest.mark.parametrize("page", [_param(p) for p in RUNNABLE])
def test_page_blocks_run_as_written(page: Path, tmp_path: Path) -> None:
    env = environment()
    reader = Reader(tmp_path, env)
    try:
        for snippet in RUNNABLE[page]:
            result = reader.run(snippet)
            assert result.returncode == 0, (f"{snippet.where}: exit {result.returncode}\n--- code\n{snippet.code}"
                                            f"--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-3000:]}")
    finally:
        stop_servers(tmp_path, env)
