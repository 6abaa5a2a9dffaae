"""The adapters' shared request plumbing outside Triton: which TritonError code a refused request gets
(the served check that the code reaches the client is in test_serve_tiny.py)."""
from __future__ import annotations

import pytest

from tests.bls import fake_pb_utils
from tritonkit.pipelines.llm.runtime.engine import GenerationLimitError
from tritonkit.pipelines.llm.runtime.kv_cache import CacheBudgetError, CacheGeometry, KVCachePool
from tritonkit.pipelines.llm.runtime.sampling import SamplingParams
from tritonkit.pipelines.llm.runtime.triton_io import RequestError, refusal


def _raised(action) -> Exception:
    with pytest.raises((ValueError, CacheBudgetError)) as caught:
        action()
    return caught.value


def test_a_bad_value_is_invalid_arg_and_a_full_server_unavailable() -> None:
    bad_value = _raised(lambda: SamplingParams(top_p=2.0).validate())
    missing = RequestError("input 'input_ids' is required")
    over_budget = _raised(lambda: KVCachePool(CacheGeometry(1, 1, 1), 0).allocate("a", 4))
    at_limit = GenerationLimitError("2 generations are live, the limit (max_streams) is 2")
    codes = {str(exc): refusal(fake_pb_utils, exc).code() for exc in (bad_value, missing, over_budget, at_limit)}
    assert codes == {str(bad_value): "INVALID_ARG", str(missing): "INVALID_ARG",
                     str(over_budget): "UNAVAILABLE", str(at_limit): "UNAVAILABLE"}
    assert refusal(fake_pb_utils, bad_value).message() == "top_p must be in (0, 1], got 2.0"
