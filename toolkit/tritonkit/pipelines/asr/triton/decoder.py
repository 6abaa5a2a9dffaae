"""Triton adapter for `decoder`: CTC log-probs [T, V] -> TRANSCRIPT and WORDS (JSON word times) over TLG.

The graph (TLG.fst, words, tokens, lexicon) is read from this model's own version folder, where the build copies
it from the acoustic model's `asr_graph:`; beam, max_active, lattice_beam and the frame timing come from this
model's parameters.
"""
import json
import os
import sys

import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from asr_runtime.decoder import Graph, WfstDecoder
from asr_runtime.serving import decoder_config, invalid_arg, own_folder, parameters, transcript_response


class TritonPythonModel:
    def initialize(self, args):
        params = parameters(json.loads(args["model_config"]))
        graph = Graph.load(own_folder(args))
        self.decoder = WfstDecoder(graph, decoder_config(params))

    def execute(self, requests):
        return [self._one(request) for request in requests]

    def _one(self, request):
        log_probs = pb_utils.get_input_tensor_by_name(request, "LOG_PROBS").as_numpy()
        try:
            result = self.decoder.decode(log_probs[0])
        except ValueError as exc:
            return invalid_arg(pb_utils, exc)
        return transcript_response(pb_utils, result)
