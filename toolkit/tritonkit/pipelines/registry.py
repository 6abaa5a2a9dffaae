"""The pipelines tritonkit knows, one line each: the only `tritonkit.pipelines` module the core imports.

Adding a pipeline: its folder `pipelines/<name>/` with `plugin.py` (`PIPELINE = Pipeline(...)`, see `plugin.py`)
and `starter/`, plus its line here.
"""
from typing import Any

from tritonkit.pipelines.asr.plugin import PIPELINE as ASR
from tritonkit.pipelines.bls.plugin import PIPELINE as BLS
from tritonkit.pipelines.classifier.plugin import PIPELINE as CLASSIFIER
from tritonkit.pipelines.image.plugin import PIPELINE as IMAGE
from tritonkit.pipelines.llm.plugin import PIPELINE as LLM
from tritonkit.pipelines.plugin import Made, Pipeline, Section, Starter
from tritonkit.pipelines.tts.plugin import PIPELINE as TTS

__all__ = ["PIPELINES", "Made", "Pipeline", "Section", "Starter"]

PIPELINES: dict[str, Pipeline[Any]] = {p.name: p for p in (CLASSIFIER, BLS, LLM, ASR, TTS, IMAGE)}
