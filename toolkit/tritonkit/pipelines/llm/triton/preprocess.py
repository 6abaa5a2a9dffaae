"""Triton adapter for `preprocess`: prompt text (or a chat message) -> token ids, and the request's sampling
settings (inputs or request parameters) checked and packed into one JSON `sampling` tensor for `generate`.

`text_input` is the raw prompt; with `chat` true (input or request parameter) it is the user's message,
wrapped in the model's chat format with an optional `system_prompt`. The tokenizer and chat format are this
model's own copies of generate's tokenizer.json and generation.json.
"""
import os
import sys

import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llm_runtime import assets
from llm_runtime.prompts import prompt_ids
from llm_runtime.requests import packed_settings
from llm_runtime.text import TextCodec
from llm_runtime.triton_io import (
    RequestError,
    batched_output,
    refusal,
    request_inputs,
    request_parameters,
    text_array,
)


class TritonPythonModel:
    def initialize(self, args):
        config, _, folder = assets.model_context(args, (assets.TOKENIZER_FILE, assets.GENERATION_FILE))
        self.generation = assets.GenerationConfig.load(folder)
        self.codec = TextCodec(folder / assets.TOKENIZER_FILE)
        self.batched = config.get("max_batch_size", 0) > 0

    def execute(self, requests):
        return [self._one(request) for request in requests]

    def _one(self, request):
        try:
            inputs = request_inputs(request, self.batched)
            if "text_input" not in inputs:
                raise RequestError("input 'text_input' is required")
            parameters = request_parameters(request)
            ids = prompt_ids(self.codec, self.generation, inputs, parameters)
            sampling = packed_settings(inputs, parameters)
        except ValueError as exc:
            return pb_utils.InferenceResponse(error=refusal(pb_utils, exc))
        return pb_utils.InferenceResponse([
            pb_utils.Tensor("input_ids", batched_output(ids, self.batched)),
            pb_utils.Tensor("sampling", batched_output(text_array(sampling), self.batched))])
