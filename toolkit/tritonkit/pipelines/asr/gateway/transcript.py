"""A transcript in OpenAI's response formats: json, text, verbose_json (words and one segment), srt, vtt.

The `asr` ensemble answers TRANSCRIPT and WORDS (JSON [{"word", "start_s", "end_s"}]); one segment spans them all.
"""
import json
from dataclasses import dataclass
from functools import cached_property
from typing import Any


@dataclass(frozen=True)
class Transcript:
    """TRANSCRIPT, WORDS as the ensemble sent it (JSON, read only by the formats that show words: not json or text,
    the common ones) and the upload's duration in seconds."""

    text: str
    words_json: str
    duration: float

    @cached_property
    def words(self) -> tuple[dict[str, Any], ...]:
        return tuple({"word": w["word"], "start": float(w["start_s"]), "end": float(w["end_s"])}
                     for w in json.loads(self.words_json or "[]"))

    def span(self) -> tuple[float, float]:
        return (self.words[0]["start"], self.words[-1]["end"]) if self.words else (0.0, self.duration)

    def verbose(self, granularities: set[str]) -> dict[str, Any]:
        start, end = self.span()
        body: dict[str, Any] = {"task": "transcribe", "language": "english", "duration": self.duration,
                                "text": self.text}
        if "word" in granularities:
            body["words"] = list(self.words)
        if "segment" in granularities or not granularities:
            body["segments"] = [{"id": 0, "seek": 0, "start": start, "end": end, "text": self.text, "tokens": [],
                                 "temperature": 0.0, "avg_logprob": 0.0, "compression_ratio": 1.0,
                                 "no_speech_prob": 0.0}]
        return body

    def subtitles(self, vtt: bool) -> str:
        start, end = self.span()
        times = f"{_time(start, vtt)} --> {_time(end, vtt)}"
        return f"WEBVTT\n\n{times}\n{self.text}\n" if vtt else f"1\n{times}\n{self.text}\n"


def _time(seconds: float, vtt: bool) -> str:
    millis = round(seconds * 1000)
    hours, rest = divmod(millis, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}{'.' if vtt else ','}{millis:03d}"
