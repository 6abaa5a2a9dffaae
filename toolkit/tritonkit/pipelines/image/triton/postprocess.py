"""Triton adapter for `postprocess`: LOGITS [batch, classes] -> LABEL (the best class), LABELS and SCORES (the k
best, k = LABELS' dims) from labels.txt in this model's own version folder."""
import json
import os
import sys
from pathlib import Path

import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from image_runtime.labels import Postprocess


class TritonPythonModel:
    def initialize(self, args):
        folder = Path(args["model_repository"]) / args["model_version"]
        self.postprocess = Postprocess.from_model_config(json.loads(args["model_config"]), folder)

    def execute(self, requests):
        responses = []
        for request in requests:
            logits = pb_utils.get_input_tensor_by_name(request, "LOGITS").as_numpy()
            outputs = self.postprocess(logits)
            tensors = [pb_utils.Tensor(name, value) for name, value in outputs.items()]
            responses.append(pb_utils.InferenceResponse(tensors))
        return responses
