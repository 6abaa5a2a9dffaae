"""Triton adapter for `asr_stream`: float32 PCM chunks of many streams -> partial / final TRANSCRIPT.

Sequence batching (oldest strategy) gives each execute chunks of different streams, with START, END and the
correlation id as control inputs; `asr_runtime.streaming` keeps each stream's state and makes one BLS call to the
acoustic model (parameter `acoustic_model`) with all their windows stacked. Its receptive field is this model's
parameter `receptive_frames` (the spec copies the acoustic model's), subsampling likewise; the graph as for `decoder`.
A chunk longer than parameter `max_chunk_seconds` (default 5) is refused before it reaches its stream. The optional
SAMPLE_RATE (on START; 16 kHz when left out) sets the stream's rate, resampled to 16 kHz as `features` does.
"""
import json
import os
import sys

import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from asr_runtime import serving
from asr_runtime.decoder import Graph, WfstDecoder
from asr_runtime.features import MAX_CHUNK_SECONDS
from asr_runtime.stream_windows import Receptive
from asr_runtime.streaming import Chunk, StreamingRecognizer
from asr_runtime.streams import StreamLimitError, UnknownStreamError
from bls_runtime import Callees, CallError


class TritonPythonModel:
    def initialize(self, args):
        params = serving.parameters(json.loads(args["model_config"]))
        self.acoustic_model = params.get("acoustic_model", "acoustic")
        graph = Graph.load(serving.own_folder(args))
        config = serving.decoder_config(params)
        receptive = Receptive(int(serving.required_parameter(params, "receptive_frames")), config.subsampling)
        self.recognizer = StreamingRecognizer(WfstDecoder(graph, config), receptive,
                                              int(params.get("max_streams", "64")),
                                              float(params.get("idle_timeout_s", "60")),
                                              float(params.get("max_chunk_seconds") or MAX_CHUNK_SECONDS))
        self.callees = Callees(args, pb_utils)
        self.timeout_s = float(params.get("call_timeout_s", "30"))

    def _acoustic(self, features):
        called = self.callees.call(self.acoustic_model, {"FEATURES": features}, ["LOG_PROBS"], self.timeout_s)
        return called["LOG_PROBS"]

    def execute(self, requests):
        chunks = [Chunk(int(_value(r, "CORRID")), _value(r, "PCM", scalar=False), bool(_value(r, "START")),
                        bool(_value(r, "END")), _rate(r)) for r in requests]
        try:
            results = self.recognizer.step(chunks, self._acoustic)
        except CallError as exc:
            return [pb_utils.InferenceResponse(error=pb_utils.TritonError(str(exc))) for _ in requests]
        return [_response(result) for result in results]


def _value(request, name, scalar=True):
    array = pb_utils.get_input_tensor_by_name(request, name).as_numpy()
    return array.reshape(-1)[0] if scalar else array.reshape(-1)


def _rate(request):
    tensor = pb_utils.get_input_tensor_by_name(request, "SAMPLE_RATE")
    return None if tensor is None else int(tensor.as_numpy().reshape(-1)[0])


def _response(result):
    if isinstance(result, (UnknownStreamError, StreamLimitError, ValueError)):
        return serving.invalid_arg(pb_utils, result)
    if isinstance(result, Exception):
        return pb_utils.InferenceResponse(error=pb_utils.TritonError(str(result), pb_utils.TritonError.INTERNAL))
    return serving.transcript_response(pb_utils, result)
