"""The pipelines the gateway can front, by name: each brings its routes and what it knows of its tensors."""
from __future__ import annotations

from tritonkit.gateway.asr import PIPELINE as ASR
from tritonkit.gateway.catalog import GatewayPipeline
from tritonkit.gateway.llm import PIPELINE as LLM
from tritonkit.gateway.tts import PIPELINE as TTS

PIPELINES: dict[str, GatewayPipeline] = {p.name: p for p in (LLM, TTS, ASR)}
