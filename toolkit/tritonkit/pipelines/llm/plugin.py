"""The llm pipeline as tritonkit's core sees it: its starter, which writes the tiny GPT's tokenizer files."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tritonkit.pipelines.plugin import Pipeline, Starter

#: The tiny GPT is untrained: what it says is noise, which a reader of its first answer should know.
RANDOM_WEIGHTS = ("the tiny GPT has random weights, so its answers are noise: newlines, stray bytes and mojibake are "
                  "expected, not a fault; swap in SmolLM2 for words, as tritonkit.yaml's comments say")


if TYPE_CHECKING:
    from tritonkit.errors import Where
    from tritonkit.gateway.catalog import GatewayPipeline


def _assets(root: Path) -> list[Path]:
    """tokenizer.json and generation.json of the tiny GPT, which the spec copies next to the decoder."""
    from tritonkit.pipelines.llm.export.prepare import ASSET_FILES, write_assets

    write_assets("tiny", root / "assets")
    return [root / "assets" / name for name in ASSET_FILES]


def _lm_quality(float_onnx: Path, quantized_onnx: Path, lm: Any, project_dir: Path, where: Where) -> dict[str, Any]:
    """Greedy agreement and perplexity of a quantized decoder against its float graph (export/quality.py)."""
    from tritonkit.pipelines.llm.export.quality import measure  # onnxruntime and tokenizers: only when it runs

    return measure(float_onnx, quantized_onnx, lm, project_dir, where)


def _gateway() -> GatewayPipeline:
    from tritonkit.pipelines.llm.gateway.routes import PIPELINE  # starlette (the `gateway` extra) only at gateway start

    return PIPELINE


PIPELINE: Pipeline = Pipeline(
    "llm", "the streaming LLM pipeline around a tiny GPT decoder (swap in SmolLM2: see the spec's comments)",
    Starter(needs={"torch": "tritonkit[export]", "tokenizers": "tritonkit[llm]", "onnxruntime": "tritonkit[export]"},
            generate=_assets,
            generate_command="python -m tritonkit.pipelines.llm.export.prepare tiny assets --assets-only",
            note=RANDOM_WEIGHTS),
    lm_quality=_lm_quality,
    gateway=_gateway,
)
