"""A fixture's folders from `tmp_path_factory.mktemp` are removed when that fixture's scope ends (its module, class,
package or test), not at the end of the session.

pytest keeps every temporary folder of a session until it ends, so the suite's disk use was the sum of every module's
builds (a wheel's virtualenv, SmolLM2's exports, Kokoro copies: 7 GB by the middle of the run) and CI ran out of disk
on a machine whose disk is shared. A fixture that asks for `tmp_path_factory` owns the folders that appear under the
base temporary folder while its own code runs (the fixtures it depends on are set up before it, so theirs are theirs;
a folder a session fixture's lazy factory makes for it stays the session's). They are removed once every
fixture of that scope is torn down, so a server another fixture of the scope started in them has been stopped.
Session fixtures keep theirs; `tmp_path` follows `tmp_path_retention_policy` (pyproject.toml: a failed test's folder
is kept to look at).
"""
import shutil
from collections.abc import Generator
from pathlib import Path

import pytest

#: a fixture that asks for one of these owns what it makes (one that calls a session fixture's lazy factory does not)
FACTORIES = {"tmp_path_factory", "tmpdir_factory"}
#: pytest's per-test folders: kept or not by tmp_path_retention_policy
RETAINED = {"tmp_path", "tmpdir"}
#: (folder, the node whose end removes it): the module, class, package or test the owning fixture is scoped to
OWNED: list[tuple[Path, pytest.Item | pytest.Collector]] = []


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef, request: pytest.FixtureRequest) -> Generator[None, object,
                                                                                                        object]:
    if fixturedef.scope == "session" or fixturedef.argname in RETAINED or not FACTORIES & set(fixturedef.argnames):
        return (yield)
    base = request.getfixturevalue("tmp_path_factory").getbasetemp()
    before = set(base.iterdir())
    try:
        return (yield)
    finally:
        OWNED.extend((path, request.node) for path in set(base.iterdir()) - before)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    """After the teardown that ends a scope (nextitem is outside it, or there is none), its folders go."""
    yield
    going_on = set(nextitem.listchain()) if nextitem is not None else set()
    for folder, _ in [entry for entry in OWNED if entry[1] not in going_on]:
        shutil.rmtree(folder, ignore_errors=True)
    OWNED[:] = [entry for entry in OWNED if entry[1] in going_on]
