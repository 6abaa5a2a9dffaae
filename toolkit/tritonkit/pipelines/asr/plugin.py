"""The asr pipeline as tritonkit's core sees it: its starter, its `asr:` model section and the graph build step."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from tritonkit.pipelines.asr.spec import AsrSection
from tritonkit.plugin.contract import BuildStep, Endpoint, Made, Pipeline, Routes, Starter

if TYPE_CHECKING:
    from tritonkit.spec.project import Project


def _graph(name: str, section: AsrSection, project: Project) -> Made:
    """The model's TLG graph files, built or from the cache."""
    from tritonkit.pipelines.asr.graph.cache import graph_for  # start-up: numpy and protobuf only when building

    return graph_for(name, section.graph, project)


def _endpoints() -> Mapping[str, Endpoint]:
    from tritonkit.pipelines.asr.gateway.routes import ENDPOINTS  # start-up: starlette (`gateway` extra)

    return ENDPOINTS


PIPELINE = Pipeline(
    "asr", "speech recognition (fbank -> CTC -> WFST decoder, offline and streaming) on the shipped command-word model",
    Starter(needs={"torch": "tritonkit[export]", "onnxruntime": "tritonkit[export]", "kaldifst": "tritonkit[asr]",
                   "kaldi_decoder": "tritonkit[asr]", "kaldi_native_fbank": "tritonkit[asr]"}),
    AsrSection, old_fields={"asr_graph": "graph"}, build=BuildStep("graphs", _graph),
    gateway=Routes(("/v1/audio/transcriptions",), entry_model="asr", default_id="asr", endpoints=_endpoints),
)
