"""The gateway's large buffers (an upload's spooled body, its samples, the tensors sent to Triton) reused from the heap
between requests instead of mapped and unmapped for each one.

glibc maps an allocation above its mmap threshold (128 KiB at first, raised to the size of such a block once one is
freed) afresh, and hands the heap's free top back to the kernel once it exceeds the trim threshold (twice the mmap
threshold). A request holds several large buffers at once (a 10 s upload at 16 kHz: the spooled body, the frames read,
the samples, the tensor sent), so its end frees more than twice the largest and the next request faults every page in
again: ~290 page faults, ~0.25 ms of a ~0.3 ms read and decode measured here. With the mmap threshold fixed at glibc's
most (32 MiB on 64-bit) and up to twice that kept at the heap's top, the next request reuses the pages.
"""
import ctypes
import logging

log = logging.getLogger("tritonkit.gateway")

#: glibc's mallopt parameters (malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
#: glibc's largest mmap threshold on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX): allocations above it are still mapped.
MOST_FROM_HEAP = 32 << 20
#: Freed memory at the heap's top kept up to this much (glibc's default: twice the mmap threshold).
KEPT_AT_TOP = 2 * MOST_FROM_HEAP


def keep_large_buffers() -> bool:
    """Sets glibc's thresholds for this process; False (nothing changed) where the C library is not glibc."""
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is None:
        log.info("no mallopt in this C library: large buffers stay mapped per request")
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MOST_FROM_HEAP)) and bool(mallopt(M_TRIM_THRESHOLD, KEPT_AT_TOP))
