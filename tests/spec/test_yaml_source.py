"""The strict spec reader: YAML merge keys share settings, duplicates are still refused with their position."""
from __future__ import annotations

from pathlib import Path

import pytest

from tritonkit.errors import TritonkitError
from tritonkit.spec.yaml_source import read_yaml_mapping

BASE = "models:\n  a: &base\n    backend: python\n    max_batch_size: 8\n"


def test_merge_key_shares_settings_and_own_keys_override(tmp_path: Path) -> None:
    spec = tmp_path / "tritonkit.yaml"
    spec.write_text(BASE + "  b:\n    <<: *base\n    max_batch_size: 2\n")
    models = read_yaml_mapping(spec, "tritonkit.yaml")["models"]
    assert models["b"] == {"backend": "python", "max_batch_size": 2}
    assert models["a"] == {"backend": "python", "max_batch_size": 8}


def test_duplicate_key_beside_a_merge_is_still_refused(tmp_path: Path) -> None:
    spec = tmp_path / "tritonkit.yaml"
    spec.write_text(BASE + "  b:\n    <<: *base\n    max_batch_size: 2\n    max_batch_size: 4\n")
    with pytest.raises(TritonkitError, match=r"line 8, column 5: .*duplicate key 'max_batch_size'"):
        read_yaml_mapping(spec, "tritonkit.yaml")
