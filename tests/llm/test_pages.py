"""Arrays in pages of their own: zero, writable, counted while alive and given back when the last view goes; resident
memory moved onto huge pages."""
import gc
import mmap

import numpy as np
import pytest

from tests.llm.conftest import huge_pages_refused
from tritonkit.pipelines.llm.runtime import pages


def test_zeros_are_zero_writable_and_counted_until_the_last_view_goes():
    gc.collect()  # earlier tests' arrays held in reference cycles (prefix blocks) go now, not mid-test
    before = pages.mapped_bytes()
    array = pages.zeros((3, 5, 7), np.float32)
    assert array.shape == (3, 5, 7) and array.dtype == np.float32 and not array.any()
    array[1] = 2.5
    view = array[1:2]
    assert pages.mapped_bytes() == before + 3 * 5 * 7 * 4
    del array
    gc.collect()
    assert pages.mapped_bytes() == before + 3 * 5 * 7 * 4 and float(view.sum()) == 2.5 * 35  # the view holds them
    del view
    gc.collect()
    assert pages.mapped_bytes() == before


def test_an_empty_array_maps_nothing_counted():
    before = pages.mapped_bytes()
    empty = pages.zeros(0, np.float32)
    assert empty.size == 0 and pages.mapped_bytes() == before


def test_discarded_pages_read_as_zero_and_the_rest_is_kept():
    array = pages.zeros((3, 4096), np.float32)  # 16 KiB rows: four pages each
    array[:] = 1.0
    pages.discard(array, array.strides[0] + 1, 3 * array.strides[0])  # whole pages only: row 1 but its first, row 2
    assert array[0].all() and array[1, :1024].all() and not array[1, 1024:].any() and not array[2].any()


def _mapping(address: int) -> dict[str, int]:
    """The kB fields (Rss, AnonHugePages, ...) of the mapping of this process that holds `address`."""
    fields: dict[str, int] | None = None
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split()[0]
            if "-" in head and ":" not in head:
                start, end = (int(x, 16) for x in head.split("-"))
                if fields is not None:
                    break
                fields = {} if start <= address < end else None
            elif fields is not None and line.split()[-1] == "kB":
                fields[head.rstrip(":")] = int(line.split()[1])
    assert fields is not None
    return fields


def test_resident_memory_moves_onto_huge_pages_and_sparse_memory_stays_as_it_is(monkeypatch):
    if (why := huge_pages_refused()) is not None:
        pytest.skip(why)
    monkeypatch.setattr(pages, "PAGEMAP_STRIDE", 2 * pages.HUGE_PAGE)  # each mapping read in several strides
    size = 12 * pages.HUGE_PAGE  # whole 2 MiB ranges within it whatever its alignment
    full = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    # NORESERVE as pages.zeros maps KV-cache slots (and so a mapping of its own, not merged with `full`)
    sparse = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | pages._NORESERVE)
    full_array, sparse_array = np.frombuffer(full, np.uint8), np.frombuffer(sparse, np.uint8)
    full_array[::mmap.PAGESIZE] = 1
    sparse_array[:1] = 1
    moved = pages.to_huge_pages()
    full_fields = _mapping(full_array.ctypes.data)
    sparse_fields = _mapping(sparse_array.ctypes.data)
    assert full_fields["AnonHugePages"] >= 10 * pages.HUGE_PAGE // 1024 and moved >= 10 * pages.HUGE_PAGE
    assert sparse_fields["AnonHugePages"] == 0 and sparse_fields["Rss"] < 64   # untouched pages stay unbacked
    assert full_array[::mmap.PAGESIZE].all() and not full_array[1::mmap.PAGESIZE].any()   # the contents are kept


def test_without_a_readable_pagemap_nothing_moves(monkeypatch):
    def unreadable():
        raise PermissionError("/proc/self/pagemap")   # some sandboxes have no pagemap

    monkeypatch.setattr(pages, "_resident_ranges", unreadable)
    assert pages.to_huge_pages() == 0
