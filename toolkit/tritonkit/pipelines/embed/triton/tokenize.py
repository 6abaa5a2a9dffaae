"""Triton adapter for `tokenize`: `text` [batch, 1] or a client's `token_ids` [batch, n] (the text's tokens, no
special ones) -> `input_ids` [batch, longest] padded with 0 and `token_count` [batch, 1], with tokenizer.json from
this model's own version folder. An empty request or an id outside the vocabulary is that request's INVALID_ARG."""
import os
import sys

import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from embed_runtime.tokens import Tokens, padded


class TritonPythonModel:
    def initialize(self, args):
        self.tokens = Tokens(os.path.join(args["model_repository"], args["model_version"], "tokenizer.json"))

    def execute(self, requests):
        return [self._one(request) for request in requests]

    def _rows(self, request):
        text = pb_utils.get_input_tensor_by_name(request, "text")
        if text is not None:
            return self.tokens.of_texts([t.decode("utf-8") for t in text.as_numpy().reshape(-1)])
        ids = pb_utils.get_input_tensor_by_name(request, "token_ids")
        if ids is None:
            raise ValueError("send 'text' or 'token_ids'")
        return [self.tokens.of_ids(row) for row in ids.as_numpy()]

    def _one(self, request):
        try:
            ids, counts = padded(self._rows(request))
        except (ValueError, UnicodeDecodeError) as exc:
            return pb_utils.InferenceResponse(error=pb_utils.TritonError(str(exc), pb_utils.TritonError.INVALID_ARG))
        return pb_utils.InferenceResponse([pb_utils.Tensor("input_ids", ids), pb_utils.Tensor("token_count", counts)])
