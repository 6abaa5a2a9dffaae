"""Triton adapter for `encode`: every request of a dynamic batch (`input_ids` [rows, width] padded, `token_count`
[rows, 1]) in one onnxruntime run of this model's own model.onnx -> `embedding` [rows, dim]. onnxruntime's threads
come from the config's parameters as for any ONNX model (`intra_op_thread_count`, `allow_spinning`)."""
import json
import os
import sys

import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from embed_runtime.encode import encode
from tritonkit_onnx_runner import OnnxRunner


class TritonPythonModel:
    def initialize(self, args):
        folder = os.path.join(args["model_repository"], args["model_version"])
        self.runner = OnnxRunner.from_model_config(json.loads(args["model_config"]), folder)

    def execute(self, requests):
        batch = [(pb_utils.get_input_tensor_by_name(r, "input_ids").as_numpy(),
                  pb_utils.get_input_tensor_by_name(r, "token_count").as_numpy()) for r in requests]
        try:
            embeddings = encode(self.runner.run, batch)
        except Exception as exc:  # the run failed for the whole batch: every request hears why
            return [pb_utils.InferenceResponse(error=pb_utils.TritonError(f"encoder: {exc}")) for _ in requests]
        return [pb_utils.InferenceResponse([pb_utils.Tensor("embedding", e)]) for e in embeddings]
