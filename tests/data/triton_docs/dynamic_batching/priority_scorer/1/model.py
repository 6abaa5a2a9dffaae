"""Version 1 of a scorer: SCORE = scale * sum(FEATURES) (the scale comes from the config parameters)."""
import json

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        parameters = json.loads(args["model_config"]).get("parameters", {})
        self.scale = float(parameters.get("score_scale", {}).get("string_value", "1")) * 1

    def execute(self, requests):
        responses = []
        for request in requests:
            features = pb_utils.get_input_tensor_by_name(request, "FEATURES").as_numpy()
            score = (self.scale * features.sum(axis=1, keepdims=True)).astype(np.float32)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("SCORE", score)]))
        return responses
