"""Triton adapter for `frontend`: text (BYTES) -> Kokoro token ids in model-sized segments + unknown symbols.

Voice-independent. The symbol table is this model's own version folder's vocab.json, which the build copies from the
model that embeds the token ids (`files: {vocab.json: model:speech/vocab.json}`); espeak-ng's language comes from
parameter `espeak_voice` (default en-us), the segment size from `max_tokens` (default 510, Kokoro's). Empty text, text
with nothing to speak, or text longer than parameter `max_chars` (default 5000) is the request's INVALID_ARG error.
"""
import json
import os
import sys

import numpy as np
import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tts_runtime.frontend import MAX_TOKENS, Frontend
from tts_runtime.runtime import serving


class TritonPythonModel:
    def initialize(self, args):
        params = serving.parameters(json.loads(args["model_config"]))
        vocab = serving.own_file(args, serving.VOCAB_FILE)
        self.frontend = Frontend.from_vocab(vocab, params.get("espeak_voice", "en-us"),
                                            int(params.get("max_tokens", MAX_TOKENS)))
        self.max_chars = int(params.get("max_chars") or serving.MAX_CHARS)

    def execute(self, requests):
        return [self._one(request) for request in requests]

    def _one(self, request):
        try:
            text = pb_utils.get_input_tensor_by_name(request, "text").as_numpy()
            result = self.frontend(serving.text_of(text, self.max_chars))
        except ValueError as exc:  # FrontendError included: empty or too long text, nothing to speak, bad UTF-8
            return pb_utils.InferenceResponse(error=pb_utils.TritonError(str(exc), pb_utils.TritonError.INVALID_ARG))
        tokens, lengths = serving.pack_segments([segment.ids for segment in result.segments])
        return pb_utils.InferenceResponse([
            pb_utils.Tensor("tokens", tokens[None]),
            pb_utils.Tensor("segment_lengths", lengths[None]),
            pb_utils.Tensor("unknown_symbols", np.array([[serving.unknown_json(result.unknown)]], dtype=object)),
        ])
