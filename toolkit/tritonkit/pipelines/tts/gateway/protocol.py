"""The request of /v1/audio/speech as a typed model, and OpenAI's voice names as this pipeline's voices."""
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from tritonkit.gateway.protocol import OpenAIRequest, Refused

MAX_INPUT_CHARS = 4096   # OpenAI's limit; the pipeline's own (max_chars) applies too
#: OpenAI's voices as the shipped Kokoro voices (docs/pipelines/tts.md): its female ones spread over the four
#: Japanese female voices, its male ones on the male voice, as other OpenAI-compatible servers map them.
OPENAI_VOICES = {"alloy": "jf_alpha", "coral": "jf_gongitsune", "nova": "jf_nezumi", "sage": "jf_tebukuro",
                 "shimmer": "jf_alpha", "ash": "jm_kumo", "ballad": "jm_kumo", "echo": "jm_kumo", "fable": "jm_kumo",
                 "onyx": "jm_kumo", "verse": "jm_kumo"}


class SpeechRequest(OpenAIRequest):
    """POST /v1/audio/speech."""

    input: str = Field(description=f"the text, 1 to {MAX_INPUT_CHARS} characters")
    voice: str | None = Field(None, description="one of the model's voices, or an OpenAI voice name "
                              "(alloy, ash, ...) mapped to one")
    speed: float | None = Field(None, ge=0.25, le=4.0)
    response_format: Literal["wav", "pcm", "flac", "mp3", "opus"] | None = Field(
        None, description="`wav` and `pcm` stream sentence by sentence; mp3 by default")
    instructions: Annotated[Any, Refused("this model takes no instructions")] = None
    stream_format: Annotated[Any, Refused("audio only, no SSE", ("audio",))] = None

    @field_validator("input")
    @classmethod
    def _length(cls, text: str) -> str:
        if not text.strip() or len(text) > MAX_INPUT_CHARS:
            raise ValueError(f"must hold 1 to {MAX_INPUT_CHARS} characters, not only spaces; it has {len(text)}")
        return text

    @property
    def pipeline_voice(self) -> str | None:
        """The voice the pipeline is asked for: an OpenAI name mapped, any other name as it is."""
        return OPENAI_VOICES.get(self.voice, self.voice) if self.voice else None
