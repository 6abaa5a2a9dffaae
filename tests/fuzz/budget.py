"""The fuzz tests' hypothesis budget: a fixed seed and a small CI count, raised by TRITONKIT_FUZZ_EXAMPLES (`make
fuzz`)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

#: `make fuzz` sets this (e.g. 2000) to run every fuzz test that many times over; CI uses each test's own count.
EXAMPLES_ENV = "TRITONKIT_FUZZ_EXAMPLES"


def fuzz_settings(ci_examples: int) -> settings:
    """Deterministic (derandomized, no example database) so CI sees the same inputs on every run."""
    return settings(
        max_examples=int(os.environ.get(EXAMPLES_ENV) or ci_examples),
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
    )
