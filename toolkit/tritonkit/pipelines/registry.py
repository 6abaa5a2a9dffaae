"""The pipelines tritonkit ships, one line each: the registry the CLI installs (`tritonkit.plugin.host`) as
`tritonkit.pipelines.registry:PIPELINES`.

It sits above the core and the pipelines: no core module imports it. Adding a pipeline: its folder
`pipelines/<name>/` with `plugin.py` (`PIPELINE = Pipeline(...)`, see `tritonkit/plugin/contract.py`) and, for
`tritonkit init`, `starter/`, plus its line here. The gateway offers the pipelines with routes in this order.
"""
from typing import Any

from tritonkit.pipelines.asr.plugin import PIPELINE as ASR
from tritonkit.pipelines.bls.plugin import PIPELINE as BLS
from tritonkit.pipelines.classifier.plugin import PIPELINE as CLASSIFIER
from tritonkit.pipelines.embed.plugin import PIPELINE as EMBED
from tritonkit.pipelines.image.plugin import PIPELINE as IMAGE
from tritonkit.pipelines.llm.plugin import PIPELINE as LLM
from tritonkit.pipelines.tts.plugin import PIPELINE as TTS
from tritonkit.plugin.contract import Pipeline
from tritonkit.plugin.host import install_default

PIPELINES: dict[str, Pipeline[Any]] = {p.name: p for p in (CLASSIFIER, BLS, LLM, TTS, ASR, IMAGE, EMBED)}


def install() -> None:
    """Runs a process that is not the CLI (a benchmark, the tests, the docs build) with these pipelines, unless the
    environment names another registry."""
    install_default(f"{__name__}:PIPELINES")
