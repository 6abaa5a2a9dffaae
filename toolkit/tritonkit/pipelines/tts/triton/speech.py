"""Triton adapter for `speech`: Kokoro-82M end to end (acoustic model + vocoder in one ONNX graph) on onnxruntime.

Token-id segments (`tokens` + `segment_lengths`, from `frontend`) -> float32 PCM `audio` and `sample_rate`;
voice (BYTES) and speed (FP32) are optional inputs, defaulting to serving.parameters `default_voice` and 1.0. The model
and its voices are this model's own version folder's model.onnx and voices.npz (`assets: kokoro-82m`);
serving.parameters `intra_op_thread_count` (0: all cores) and `spin` (false: idle threads sleep) set onnxruntime.
An unknown voice, a speed out of range or inconsistent segments are the request's INVALID_ARG error.
"""
import json
import os
import sys

import numpy as np
import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tts_runtime.frontend import MAX_TOKENS
from tts_runtime.runtime import SAMPLE_RATE, KokoroModel, serving


class TritonPythonModel:
    def initialize(self, args):
        params = serving.parameters(json.loads(args["model_config"]))
        self.model = KokoroModel(serving.own_file(args, serving.MODEL_FILE),
                                 serving.own_file(args, serving.VOICES_FILE),
                                 intra_op_threads=int(params.get("intra_op_thread_count", "0") or 0),
                                 spin=params.get("spin", "false").lower() == "true")
        self.voice = params.get("default_voice", "jf_alpha")
        self.model.style(self.voice, 1)  # an unknown default voice fails the load, not the first request

    def execute(self, requests):
        return [self._one(request) for request in requests]

    def _one(self, request):
        try:
            segments = serving.unpack_segments(serving.optional_input(pb_utils, request, "tokens"),
                                       serving.optional_input(pb_utils, request, "segment_lengths"), MAX_TOKENS)
            voice = serving.optional_input(pb_utils, request, "voice")
            voice = serving.text_of(voice) if voice is not None else self.voice
            speed = serving.speed_of(serving.optional_input(pb_utils, request, "speed"))
            audio = np.concatenate([self.model.synthesize(ids, voice, speed) for ids in segments])
        except ValueError as exc:
            return pb_utils.InferenceResponse(error=pb_utils.TritonError(str(exc), pb_utils.TritonError.INVALID_ARG))
        return pb_utils.InferenceResponse([
            pb_utils.Tensor("audio", audio[None].astype(np.float32)),
            pb_utils.Tensor("sample_rate", np.array([[SAMPLE_RATE]], dtype=np.int32)),
        ])
