"""Triton Python model for benchmarks/asr.py's serving floor: one step of the `asr` ensemble that computes nothing.

Parameter `step` (features, acoustic or decoder) picks which; each returns zeros (or empty strings) of the shapes
the real step returns for the same input (FEATURES [frames, 80] at 100 frames/s, LOG_PROBS [frames / 2, 27],
TRANSCRIPT and WORDS), so an ensemble of the three moves the same tensors through the same hops as `asr`, and
its served time is what serving alone costs.
"""
import json

import numpy as np
import triton_python_backend_utils as pb_utils

SAMPLES_PER_FRAME = 160   # 10 ms at 16 kHz
TOKENS = 27               # the shipped acoustic model's LOG_PROBS columns


class TritonPythonModel:
    def initialize(self, args):
        self.step = json.loads(args["model_config"])["parameters"]["step"]["string_value"]

    def execute(self, requests):
        return [pb_utils.InferenceResponse(self._outputs(request)) for request in requests]

    def _outputs(self, request):
        if self.step == "features":
            samples = pb_utils.get_input_tensor_by_name(request, "PCM").as_numpy().shape[1]
            return [pb_utils.Tensor("FEATURES", np.zeros((1, samples // SAMPLES_PER_FRAME, 80), np.float32))]
        if self.step == "acoustic":
            frames = pb_utils.get_input_tensor_by_name(request, "FEATURES").as_numpy().shape[1]
            return [pb_utils.Tensor("LOG_PROBS", np.zeros((1, frames // 2, TOKENS), np.float32))]
        return [pb_utils.Tensor("TRANSCRIPT", np.array([[b""]], dtype=object)),
                pb_utils.Tensor("WORDS", np.array([[b"[]"]], dtype=object))]
