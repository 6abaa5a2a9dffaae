"""Tests of tritonkit as a packaged distribution."""
