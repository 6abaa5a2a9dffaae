"""Arrays in pages of their own: zero, writable, counted while alive and given back when the last view goes."""
import gc

import numpy as np

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
