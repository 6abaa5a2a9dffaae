"""The gateway keeps large buffers in its heap: a request's buffers, made and freed together again and again, fault
their pages in once, not once per request (measured in a process of its own, since the setting is the process's)."""
import subprocess
import sys

import pytest

from tritonkit.gateway.heap import MOST_FROM_HEAP

BUFFER = 1 << 20
#: held at once, as a request holds its upload, samples and tensors: more than twice the largest is freed together
HELD = 4
ROUNDS = 40
PAGE = 4096

FAULTS = f"""
import resource, sys
from tritonkit.gateway.heap import keep_large_buffers
kept = keep_large_buffers() if sys.argv[1] == "kept" else None
def request():
    buffers = [bytearray({BUFFER}) for _ in range({HELD})]
    del buffers
request()  # the first one faults its pages in either way
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range({ROUNDS}):
    request()
print(kept, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str) -> tuple[str, int]:
    out = subprocess.run([sys.executable, "-c", FAULTS, mode], capture_output=True, text=True, check=True).stdout
    kept, faults = out.split()
    return kept, int(faults)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_freed_large_buffer_is_reused_without_faulting_its_pages_again() -> None:
    assert BUFFER < MOST_FROM_HEAP
    pages = HELD * BUFFER // PAGE
    kept, faults = _faults("kept")
    assert kept == "True"
    assert faults < pages, f"{faults} page faults in {ROUNDS} rounds of {pages} pages of buffers"
    # the control: left to glibc, the freed buffers go back to the kernel and fault in again round after round
    _, unkept = _faults("default")
    assert unkept > ROUNDS * pages // 2, unkept
