"""Zeroed arrays in anonymous pages of their own, for the engine's large buffers: KV cache slots, prefix blocks and a
call's padded past; and the loaded weights moved onto 2 MiB pages.

glibc serves such sizes from its heap once its mmap threshold has risen (the threshold follows the largest block
freed, up to 32 MiB), and a freed cache then stays resident as a hole that the next one, of another size, may not
fit. Pages of their own are zero until written, resident only once touched, and go back to the system as soon
as the array is freed. SmolLM2 served, c=1, c=8 and 300-token prefix rounds (generate's peak resident memory):
345 MiB against 359-372 MiB from the heap.
"""
import ctypes
import functools
import mmap
import re
import sys
import threading
import weakref

import numpy as np

_lock = threading.Lock()
_mapped = 0
#: Linux's MAP_NORESERVE (Python 3.11's mmap does not name it): no swap reserved for pages not yet touched, so a
#: store of whole-context slots maps under the kernel's default overcommit however long the context; what is
#: touched stays within the engine's KV budget.
_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000 if sys.platform == "linux" else 0)


def zeros(shape: tuple[int, ...] | int, dtype: np.dtype | type) -> np.ndarray:
    """A zero-filled array in pages of its own (see the module)."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape))
    size = count * dtype.itemsize
    pages = mmap.mmap(-1, max(size, 1), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _NORESERVE)
    _count(size)
    weakref.finalize(pages, _count, -size)  # the mapping goes with the last array viewing it
    return np.frombuffer(pages, dtype, count).reshape(shape)


def discard(array: np.ndarray, start: int, stop: int) -> None:
    """Gives back the whole pages within bytes [start, stop) of an array from `zeros` (contiguous, its own mapping):
    they read as zero again and are no longer resident (a freed cache slot)."""
    pages = array.base
    while isinstance(pages, np.ndarray):  # reshaped views of the array frombuffer made over the mapping
        pages = pages.base
    if isinstance(pages, memoryview):
        pages = pages.obj
    if not isinstance(pages, mmap.mmap):
        raise ValueError("discard() takes an array made by pages.zeros")
    first = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE
    last = stop // mmap.PAGESIZE * mmap.PAGESIZE
    if last > first:
        pages.madvise(mmap.MADV_DONTNEED, first, last - first)


#: Linux's MADV_COLLAPSE (6.1 on; Python 3.11's mmap does not name it) and the x86-64/arm64 huge page it makes.
_MADV_COLLAPSE = 25
HUGE_PAGE = 2 << 20
#: A 2 MiB range is collapsed when at most this share of its pages is untouched: collapsing fills them too, so
#: sparse memory (KV-cache slots, untouched reservations) stays as it is.
MOST_UNTOUCHED = 0.1
_HEADER = re.compile(r"([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ (\d+)\s*(.*)$")
_PRESENT = np.uint64(1 << 63)  # /proc/self/pagemap: the page is in memory
PAGEMAP_STRIDE = 1 << 30  # addresses read from /proc/self/pagemap at a time (a multiple of HUGE_PAGE)


def to_huge_pages() -> int:
    """Moves the process's resident anonymous memory onto 2 MiB pages, now, and returns the bytes moved: after a
    decoder's session is made, that is mostly its weights (onnxruntime's prepacked MatMulNBits blocks), which a
    decode step reads whole. On 4 KiB pages those are ~30,000 pages a step, each a TLB entry and a boundary the
    hardware prefetcher stops at; on 2 MiB pages ~60. SmolLM2 int4 in process (3 alternating pairs of
    processes, 15 x 32 steps each): a decode step 4.78-5.26 against 5.64-5.96 ms, resident memory unchanged.
    MADV_COLLAPSE acts whatever the system's transparent huge page setting is, short of `never`; where it is
    refused (kernels before 6.1, not Linux, `never`, no /proc/self/pagemap as in some sandboxes) nothing changes and
    0 is returned."""
    madvise = _madvise()
    if madvise is None:
        return 0
    try:
        ranges = _resident_ranges()
    except OSError:
        return 0
    moved = 0
    for start, end in ranges:
        if madvise(start, end - start, _MADV_COLLAPSE) == 0:
            moved += end - start
    return moved


@functools.cache
def _madvise():
    if sys.platform != "linux":
        return None
    function = ctypes.CDLL(None, use_errno=True).madvise
    function.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return function


def _resident_ranges() -> list[tuple[int, int]]:
    """[start, end) of runs of whole 2 MiB ranges of private writable anonymous memory (and the heap) whose pages
    are resident but for MOST_UNTOUCHED."""
    ranges: list[tuple[int, int]] = []
    per_range = HUGE_PAGE // mmap.PAGESIZE
    with open("/proc/self/pagemap", "rb") as pagemap:
        for start, end in _anonymous_mappings():
            first, last = -(-start // HUGE_PAGE) * HUGE_PAGE, end // HUGE_PAGE * HUGE_PAGE
            # a GiB of addresses at a time: 2 MiB of pagemap, however large a reservation is
            for low in range(first, last, PAGEMAP_STRIDE):
                high = min(low + PAGEMAP_STRIDE, last)
                pagemap.seek(low // mmap.PAGESIZE * 8)
                entries = np.frombuffer(pagemap.read((high - low) // mmap.PAGESIZE * 8), np.uint64)
                resident = ((entries & _PRESENT) != 0).reshape(-1, per_range).sum(axis=1)
                for i in np.flatnonzero(resident >= (1 - MOST_UNTOUCHED) * per_range):
                    begin = low + int(i) * HUGE_PAGE
                    if ranges and ranges[-1][1] == begin:
                        ranges[-1] = (ranges[-1][0], begin + HUGE_PAGE)
                    else:
                        ranges.append((begin, begin + HUGE_PAGE))
    return ranges


def _anonymous_mappings() -> list[tuple[int, int]]:
    """[start, end) of the private writable anonymous mappings (the heap, and those a library named) with at least
    2 MiB resident."""
    found: list[tuple[int, int]] = []
    candidate: tuple[int, int] | None = None
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            header = _HEADER.match(line)
            if header is not None:
                start, end, perms, inode, name = header.groups()
                anonymous = (perms.startswith("rw") and perms.endswith("p") and inode == "0"
                             and (name in ("", "[heap]") or name.startswith("[anon:")))  # named: PR_SET_VMA
                candidate = (int(start, 16), int(end, 16)) if anonymous else None
            elif candidate is not None and line.startswith("Rss:"):
                if int(line.split()[1]) * 1024 >= HUGE_PAGE:
                    found.append(candidate)
                candidate = None
    return found


def mapped_bytes() -> int:
    """Bytes of the arrays `zeros` made that are still alive (heap tracing does not see them; tests do)."""
    return _mapped


def _count(size: int) -> None:
    global _mapped
    with _lock:
        _mapped += size
