"""Triton adapter for `features`: float32 PCM + sample rate -> 80-dim log-mel fbank frames [T, 80].

One request at a time (requests of a batch have different lengths); audio at another rate is resampled by
`asr_runtime.features`, and a bad rate, empty audio or audio longer than parameter `max_audio_seconds` (default 60)
is the request's error.
"""
import json
import os
import sys

import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from asr_runtime.features import MAX_AUDIO_SECONDS, compute_fbank
from asr_runtime.serving import invalid_arg, parameters


class TritonPythonModel:
    def initialize(self, args):
        params = parameters(json.loads(args["model_config"]))
        self.max_seconds = float(params.get("max_audio_seconds") or MAX_AUDIO_SECONDS)

    def execute(self, requests):
        return [self._one(request) for request in requests]

    def _one(self, request):
        pcm = pb_utils.get_input_tensor_by_name(request, "PCM").as_numpy()
        rate = pb_utils.get_input_tensor_by_name(request, "SAMPLE_RATE").as_numpy()
        if pcm.shape[0] != 1:
            return invalid_arg(pb_utils, f"send one utterance per request (batch size 1), got {pcm.shape[0]}")
        try:
            features = compute_fbank(pcm[0], int(rate.reshape(-1)[0]), self.max_seconds)
        except ValueError as exc:
            return invalid_arg(pb_utils, exc)
        return pb_utils.InferenceResponse([pb_utils.Tensor("FEATURES", features[None])])
