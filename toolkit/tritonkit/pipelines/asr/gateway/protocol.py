"""The request of /v1/audio/transcriptions as a typed model, read from its multipart form."""
from typing import Annotated, Any, Literal, Self

from pydantic import AliasChoices, BeforeValidator, ConfigDict, Field, WithJsonSchema
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request

from tritonkit.gateway.errors import bad_request
from tritonkit.gateway.protocol import OpenAIRequest, Refused, listed

#: Form fields a client may send more than once (OpenAI's clients write lists as `name[]`).
LISTS = ("timestamp_granularities", "include", "known_speaker_names")


def _either(name: str) -> AliasChoices:
    return AliasChoices(f"{name}[]", name)


class TranscriptionRequest(OpenAIRequest):
    """POST /v1/audio/transcriptions (multipart/form-data: form values are text, read as the fields' types)."""

    model_config = ConfigDict(strict=False, arbitrary_types_allowed=True)

    file: Annotated[UploadFile, WithJsonSchema({"type": "string", "format": "binary"})] = Field(
        description="the audio (a file part): any format libsndfile reads (WAV, FLAC, OGG, MP3, ...)")
    response_format: Literal["json", "text", "verbose_json", "srt", "vtt"] = "json"
    stream: bool = Field(False, description="`transcript.text.delta` events, one per word, then "
                         "`transcript.text.done`")
    timestamp_granularities: Annotated[list[Literal["word", "segment"]], BeforeValidator(listed)] = Field(
        [], validation_alias=_either("timestamp_granularities"), description="verbose_json's words and segments")
    temperature: Annotated[Any, Refused("the WFST decoder is deterministic", ("", "0", "0.0"))] = None
    language: Annotated[Any, Refused("this pipeline transcribes English", ("", "en"))] = None
    prompt: Annotated[Any, Refused("the decoder takes no prompt")] = None
    include: Annotated[Any, Refused("no log-probabilities")] = Field(None, validation_alias=_either("include"))
    chunking_strategy: Annotated[Any, Refused("whole files only")] = None
    known_speaker_names: Annotated[Any, Refused("no diarization")] = Field(
        None, validation_alias=_either("known_speaker_names"))

    @classmethod
    async def read(cls, request: Request) -> Self:
        """The multipart form, checked; its file stays open for the route (which closes it)."""
        parsed = await _form(request)
        try:
            return cls.checked(_fields(parsed))
        except BaseException:
            await parsed.close()
            raise


def _fields(form: FormData) -> dict[str, Any]:
    """The form as the model reads it: a list field's values (empty ones left out) as a list, else the last value."""
    fields: dict[str, Any] = {}
    for key, value in form.multi_items():
        if key.removesuffix("[]") in LISTS:
            fields.setdefault(key, []).extend([value] if value != "" else [])
        else:
            fields[key] = value
    return fields


async def _form(request: Request) -> FormData:
    """The multipart form; a body python-multipart cannot parse (no boundary, not multipart inside, a part without a
    name, a second file) is OpenAI's 400 rather than Starlette's plain-text one."""
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise bad_request("send multipart/form-data with the audio as 'file'", "file", "invalid_request")
    try:
        return await request.form(max_files=1, max_fields=32)
    except HTTPException as exc:
        raise bad_request(f"the multipart body cannot be parsed ({exc.detail.rstrip('.')}): send "
                          "multipart/form-data with one audio file as 'file'", "file", "invalid_multipart") from None
