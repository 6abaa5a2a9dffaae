"""Triton adapter for `preprocess`: IMAGE (encoded PNG, JPEG, ... bytes) [batch, 1] -> PIXELS [batch, 3, H, W].

H and W are this model's PIXELS dims; parameters mean, std (three numbers each) and max_pixels are optional.
An image Pillow cannot read, or one over max_pixels, is that request's INVALID_ARG error.
"""
import json
import os
import sys

import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from image_runtime.pixels import Preprocess


class TritonPythonModel:
    def initialize(self, args):
        self.preprocess = Preprocess.from_model_config(json.loads(args["model_config"]))

    def execute(self, requests):
        return [self._one(request) for request in requests]

    def _one(self, request):
        images = pb_utils.get_input_tensor_by_name(request, "IMAGE").as_numpy()
        try:
            pixels = self.preprocess(images)
        except ValueError as exc:
            return pb_utils.InferenceResponse(error=pb_utils.TritonError(str(exc), pb_utils.TritonError.INVALID_ARG))
        return pb_utils.InferenceResponse([pb_utils.Tensor("PIXELS", pixels)])
