"""The llm pipeline as tritonkit's core sees it: its starter (which writes the tiny GPT's tokenizer files), how a
quantized decoder is judged, its OpenAI routes and its engine for `tune --joint`."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tritonkit.pipelines.llm.export.report import measures_line
from tritonkit.pipelines.llm.names import ENGINE, KV_CACHE_PARAMETER
from tritonkit.pipelines.llm.spec import DESCRIPTION, LMQualitySpec
from tritonkit.pipelines.llm.tune import engine as tuning
from tritonkit.plugin.contract import Endpoint, InstanceMemory, OwnModel, Pipeline, QuantizeCheck, Routes, Starter

#: The tiny GPT is untrained: what it says is noise, which a reader of its first answer should know.
RANDOM_WEIGHTS = ("the tiny GPT has random weights, so its answers are noise: newlines, stray bytes and mojibake are "
                  "expected, not a fault; swap in SmolLM2 for words, as tritonkit.yaml's comments say")


if TYPE_CHECKING:
    from tritonkit.errors import Where
    from tritonkit.triton.model_config import pb


def _assets(root: Path) -> list[Path]:
    """tokenizer.json and generation.json of the tiny GPT, which the spec copies next to the decoder."""
    from tritonkit.pipelines.llm.export.prepare import ASSET_FILES, write_assets

    write_assets("tiny", root / "assets")
    return [root / "assets" / name for name in ASSET_FILES]


def _check_own_model(model: Path) -> None:
    from tritonkit.pipelines.llm import own_model  # start-up: reads the model's config only when init is given one

    own_model.check(model)


def _own_model(root: Path, model: Path) -> list[Path]:
    """The starter pointed at the user's checkpoint (`init --model`), its tokenizer and chat format as assets."""
    from tritonkit.pipelines.llm import own_model  # start-up: transformers, when init is given a model

    return own_model.write(root, model)


def _lm_quality(float_onnx: Path, quantized_onnx: Path, lm: LMQualitySpec, project_dir: Path,
                where: Where) -> dict[str, Any]:
    """Greedy agreement, perplexity and chat tasks of a quantized decoder against its float graph (quality.py)."""
    from tritonkit.pipelines.llm.export.quality import measure  # start-up: numpy, onnxruntime and tokenizers

    return measure(float_onnx, quantized_onnx, lm, project_dir, where)


def _kv_cache(config: pb.ModelConfig) -> int:
    """The engine's KV-cache pool, held by each of its instances."""
    from tritonkit.triton.model_config import int_parameter  # start-up: protobuf only when a deployment is sized

    return int_parameter(config, KV_CACHE_PARAMETER)


def _endpoints() -> Mapping[str, Endpoint]:
    from tritonkit.pipelines.llm.gateway.routes import ENDPOINTS  # start-up: starlette (`gateway` extra)

    return ENDPOINTS


PIPELINE: Pipeline = Pipeline(
    "llm", "the streaming LLM pipeline around a tiny GPT decoder (swap in SmolLM2: see the spec's comments)",
    Starter(needs={"torch": "tritonkit[export]", "tokenizers": "tritonkit[llm]", "onnxruntime": "tritonkit[export]"},
            generate=_assets,
            generate_command="python -m tritonkit.pipelines.llm.export.prepare tiny assets --assets-only",
            note=RANDOM_WEIGHTS, own_model=OwnModel(_check_own_model, _own_model)),
    quantize=QuantizeCheck(
        "lm", LMQualitySpec, DESCRIPTION, "measure the quantized LM against the float graph (greedy tokens, "
        "perplexity, chat tasks)", lambda lm: [lm.tokenizer], _lm_quality, measures_line),
    gateway=Routes(("/v1/chat/completions", "/v1/completions"), entry_model=ENGINE, default_id="llm",
                   endpoints=_endpoints, entry_note="the engine, sent the prompt's ids"),
    tuning=tuning.ENGINE,
    instance_memory=InstanceMemory("kv", _kv_cache),
)
