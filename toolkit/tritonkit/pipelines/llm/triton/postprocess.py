"""Triton adapter for `postprocess`: generated token ids -> the text this response adds.

Stateless: each response carries the ids generated so far and how many are new (all of them when `token_ids` is
not sent, as in `llm_complete`'s one response), and the delta is computed
by `llm_runtime.text.text_delta`, which never splits a UTF-8 character and never shows a stop string (or a
tail that may still become one). The final response (non-empty `finish_reason`) flushes what was held.
The new ids and the finish reason pass through, so the ensembles' outputs all come from this step.
"""
import os
import sys

import numpy as np
import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llm_runtime import assets
from llm_runtime.requests import stop_strings
from llm_runtime.text import TextCodec, text_delta
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
        config, _, folder = assets.model_context(args, (assets.TOKENIZER_FILE,))
        self.codec = TextCodec(folder / assets.TOKENIZER_FILE)
        self.batched = config.get("max_batch_size", 0) > 0

    def execute(self, requests):
        return [self._one(request) for request in requests]

    def _one(self, request):
        try:
            inputs = request_inputs(request, self.batched)
            if "generated_ids" not in inputs:
                raise RequestError("input 'generated_ids' is required")
            ids = inputs["generated_ids"].reshape(-1).tolist()
            new = inputs["token_ids"].size if "token_ids" in inputs else len(ids)
            if new > len(ids):
                raise RequestError(f"token_ids has {new} ids but generated_ids only {len(ids)}")
            reason = inputs.get("finish_reason")
            final = bool(reason is not None and reason.size and reason.reshape(-1)[0])
            parameters = request_parameters(request)
            stop = stop_strings(inputs, parameters, "stop_strings")
            delta = text_delta(self.codec.decode, ids, new, stop, final)
        except ValueError as exc:
            return pb_utils.InferenceResponse(error=refusal(pb_utils, exc))
        new_ids = np.asarray(ids[len(ids) - new:], np.int64)
        reason_text = reason.reshape(-1)[0] if final else b""
        return pb_utils.InferenceResponse([
            pb_utils.Tensor("text_output", batched_output(text_array(delta), self.batched)),
            pb_utils.Tensor("output_ids", batched_output(new_ids, self.batched)),
            pb_utils.Tensor("output_finish_reason",
                            batched_output(np.array([reason_text], dtype=object), self.batched)),
        ])
