"""The llm pipeline as tritonkit's core sees it: its starter, which writes the tiny GPT's tokenizer files."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tritonkit.pipelines.plugin import Pipeline, Starter

if TYPE_CHECKING:
    from tritonkit.gateway.catalog import GatewayPipeline


def _assets(root: Path) -> list[Path]:
    """tokenizer.json and generation.json of the tiny GPT, which the spec copies next to the decoder."""
    from tritonkit.pipelines.llm.export.prepare import ASSET_FILES, write_assets

    write_assets("tiny", root / "assets")
    return [root / "assets" / name for name in ASSET_FILES]


def _gateway() -> GatewayPipeline:
    from tritonkit.pipelines.llm.gateway.routes import PIPELINE  # starlette (the `gateway` extra) only when the gateway starts

    return PIPELINE


PIPELINE: Pipeline = Pipeline(
    "llm", "the streaming LLM pipeline around a tiny GPT decoder (swap in SmolLM2: see the spec's comments)",
    Starter(needs={"torch": "tritonkit[export]", "tokenizers": "tritonkit[llm]", "onnxruntime": "tritonkit[export]"},
            generate=_assets, generate_command="python -m tritonkit.pipelines.llm.export.prepare tiny assets --assets-only"),
    gateway=_gateway,
)
