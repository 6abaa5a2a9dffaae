"""serve/stubs.StubWatch: a stub that dies unasked gets its model reloaded once, whatever instant it dies at.

The process table is a stand-in here so that the death can be put between any two of the watch's reads of /proc:
a real SIGKILL lands at a random point of the poll, and one landing between the zombie check and the new listing was
dropped unseen (CI: tests/faults/test_stub_killed's model never served again). The real kill is tests/faults'."""
from pathlib import Path

import pytest

from tritonkit.serve import stubs

VICTIM, RELOADED = 100, 101


class ProcessTable:
    """One stub of model 'victim' that dies after the `dies_after`-th read; a reload starts a new stub."""

    def __init__(self, dies_after: int) -> None:
        self.reads, self.dies_after = 0, dies_after
        self.live = {VICTIM: "victim"}
        self.zombies: set[int] = set()
        self.reloads: list[str] = []

    def _read(self) -> None:
        self.reads += 1
        if self.reads == self.dies_after:
            del self.live[VICTIM]
            self.zombies.add(VICTIM)  # Triton does not reap a stub that died unasked

    def stub_pids(self, server_pid: int) -> dict[int, str]:
        self._read()
        return dict(self.live)

    def is_zombie(self, pid: int) -> bool:
        self._read()
        return pid in self.zombies

    def reload_model(self, url: str, model: str, key_env: str | None = None) -> tuple[bool, str]:
        self.reloads.append(model)
        self.live[RELOADED] = model
        return True, ""


@pytest.mark.parametrize("dies_after", range(2, 9))
def test_a_stub_dying_at_any_read_of_a_poll_is_healed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             dies_after: int) -> None:
    table = ProcessTable(dies_after)
    monkeypatch.setattr(stubs, "stub_pids", table.stub_pids)
    monkeypatch.setattr(stubs, "_is_zombie", table.is_zombie)
    monkeypatch.setattr(stubs.health, "reload_model", table.reload_model)
    watch = stubs.StubWatch(1, "http://127.0.0.1:1", tmp_path / "events.jsonl")  # the first read
    restarts = [event for _ in range(10) for event in watch.heal()]
    assert table.reads >= dies_after, "the stub died within the polls"
    assert table.reloads == ["victim"]
    assert [(event.model, event.pid, event.reloaded) for event in restarts] == [("victim", VICTIM, True)]
    assert [event.pid for event in stubs.read_events(tmp_path / "events.jsonl")] == [VICTIM]
