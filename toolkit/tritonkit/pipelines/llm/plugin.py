"""The llm pipeline as tritonkit's core sees it: its starter, which writes the tiny GPT's tokenizer files."""
from __future__ import annotations

from pathlib import Path

from tritonkit.pipelines.plugin import Pipeline, Starter


def _assets(root: Path) -> list[Path]:
    """tokenizer.json and generation.json of the tiny GPT, which the spec copies next to the decoder."""
    from tritonkit.pipelines.llm.export.prepare import ASSET_FILES, write_assets

    write_assets("tiny", root / "assets")
    return [root / "assets" / name for name in ASSET_FILES]


PIPELINE: Pipeline = Pipeline(
    "llm", "the streaming LLM pipeline around a tiny GPT decoder (swap in SmolLM2: see the spec's comments)",
    Starter(needs={"torch": "tritonkit[export]", "tokenizers": "tritonkit[llm]", "onnxruntime": "tritonkit[export]"},
            generate=_assets, generate_command="python -m tritonkit.pipelines.llm.export.prepare tiny assets --assets-only"),
)
