"""Triton adapter for `decoder`: one raw KV-cache decoder call per request (for clients running their own loop,
and for checking the exported graph through the server).

Only `input_ids` is required: without `past_key`/`past_value` the cache is empty, `past_length` defaults to
the cache length and `input_length` to all tokens. Outputs the newest token's logits and the present cache to
send back as the next call's past. The export's golden samples replay through here in `tritonkit smoke`.
"""
import json
import os
import sys

import numpy as np
import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llm_runtime import assets
from llm_runtime.decoder import OnnxDecoder


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        params = assets.model_parameters(config)
        folder = os.path.join(args["model_repository"], args["model_version"])
        self.decoder = OnnxDecoder(os.path.join(folder, assets.MODEL_FILE),
                                   assets.int_parameter(params, "intra_op_thread_count", 0))
        self.batched = config.get("max_batch_size", 0) > 0

    def execute(self, requests):
        return [self._one(request) for request in requests]

    def _one(self, request):
        def get(name):
            tensor = pb_utils.get_input_tensor_by_name(request, name)
            return None if tensor is None else tensor.as_numpy()

        try:
            ids = get("input_ids")
            if not self.batched:
                ids = ids[np.newaxis]
            batch, seq = ids.shape
            past_key, past_value = get("past_key"), get("past_value")
            if (past_key is None) != (past_value is None):
                raise ValueError("send both past_key and past_value, or neither")
            if past_key is None:
                past_key = past_value = self.decoder.empty_past(batch)
            elif not self.batched:
                past_key, past_value = past_key[np.newaxis], past_value[np.newaxis]
            past_length, input_length = get("past_length"), get("input_length")
            if past_length is None:
                past_length = np.full((batch, 1), past_key.shape[3], np.int64)
            if input_length is None:
                input_length = np.full((batch, 1), seq, np.int64)
            logits, present_key, present_value = self.decoder.run(ids, past_key, past_value, past_length, input_length)
        except Exception as exc:  # noqa: BLE001 - onnxruntime shape/type errors go back to the client
            return pb_utils.InferenceResponse(error=pb_utils.TritonError(f"decoder: {exc}"))
        outputs = {"logits": logits, "present_key": present_key, "present_value": present_value}
        if not self.batched:
            outputs = {k: v[0] for k, v in outputs.items()}
        wanted = set(request.requested_output_names()) or set(outputs)
        return pb_utils.InferenceResponse([pb_utils.Tensor(k, v) for k, v in outputs.items() if k in wanted])
