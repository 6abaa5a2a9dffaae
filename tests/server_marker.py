"""Fails a test that starts a tritonserver without `@pytest.mark.server`, so `pytest -m "not server"` stays the
fast unit subset.

Every process this pytest run starts inherits TRITONKIT_TEST_SESSION; a tritonserver carrying it that first shows up
while an unmarked test runs (its fixtures' setup included) is that test's. Seen by a poll every half second and a
look before the test's teardown, so one started and stopped within a test is caught too. Other runs' servers
(a benchmark, another checkout's tests) carry another value or none and are left alone.
"""
from __future__ import annotations

import os
import threading
import time
import uuid
from pathlib import Path

import pytest

from tritonkit.serve.process import tritonserver_pids

KEY, VALUE = "TRITONKIT_TEST_SESSION", uuid.uuid4().hex
POLL_S = 0.5


class ServerWatch:
    """The tritonserver processes seen so far, and those of this run first seen in the unmarked test now running."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.known: set[int] = set()
        self.unmarked: str | None = None  # node id of the running test when it has no `server` mark
        self.found: list[str] = []
        self.after_server_test = True  # a server test (or nothing) ran last: what runs now is not the next test's

    def scan(self) -> None:
        with self.lock:
            for pid in tritonserver_pids():
                if pid in self.known:
                    continue
                self.known.add(pid)
                if self.unmarked is not None and ours(pid):
                    self.found.append(f"tritonserver pid {pid}")


def ours(pid: int) -> bool:
    try:
        return f"{KEY}={VALUE}".encode() in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


WATCH = ServerWatch()


def _poll() -> None:
    while True:
        time.sleep(POLL_S)
        WATCH.scan()


def pytest_configure(config: pytest.Config) -> None:
    os.environ[KEY] = VALUE
    threading.Thread(target=_poll, name="server-marker", daemon=True).start()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    if WATCH.after_server_test:
        WATCH.scan()  # what the last test left running is not this one's
    marked = item.get_closest_marker("server") is not None
    with WATCH.lock:
        WATCH.unmarked, WATCH.found, WATCH.after_server_test = None if marked else item.nodeid, [], marked
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    if WATCH.unmarked is not None:
        WATCH.scan()
    with WATCH.lock:
        found, WATCH.unmarked = list(WATCH.found), None
    result = yield
    if found:
        pytest.fail(f"{item.nodeid} starts Triton ({', '.join(found)}) but has no @pytest.mark.server: mark it "
                    "(or its module: pytestmark = pytest.mark.server) so `pytest -m 'not server'` leaves it out",
                    pytrace=False)
    return result
