"""The gateway's threads take short time slices, those started later too, each keeping its policy and nice value
(checked in a process of its own, since the setting stays with the process's threads)."""
import os
import platform
import subprocess
import sys

import pytest

from tritonkit.gateway.slices import SHORT_SLICE_NS

SLICES = """
import os, threading
from tritonkit.gateway.slices import prefer_short_slices
os.nice(3)
os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
taken = prefer_short_slices()
def slice_of(tid):
    line = next(l for l in open(f"/proc/self/task/{tid}/sched") if l.startswith("se.slice"))
    return int(line.split()[-1])
def later():
    print(slice_of(threading.get_native_id()))
thread = threading.Thread(target=later)
thread.start()
thread.join()
print(taken, slice_of(threading.get_native_id()), os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0))
"""


def _kernel() -> tuple[int, ...]:
    return tuple(int(part) for part in platform.release().split("-")[0].split(".")[:2])


@pytest.mark.skipif(not sys.platform.startswith("linux") or _kernel() < (6, 12),
                    reason="custom fair-class slices are Linux 6.12's")
def test_threads_take_the_short_slice_and_keep_their_policy_and_nice_value() -> None:
    out = subprocess.run([sys.executable, "-c", SLICES], capture_output=True, text=True, check=True).stdout.split()
    later, taken, own, nice, policy = map(int, out)
    assert taken >= 1
    assert own == SHORT_SLICE_NS
    assert later == SHORT_SLICE_NS, "a thread started afterwards (uvicorn's, gRPC's poller) inherits the slice"
    assert (nice, policy) == (3, os.SCHED_BATCH), "the policy and nice value set before"
