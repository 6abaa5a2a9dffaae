"""Triton adapter for the three-stage `speech` model: token-id segments -> `acoustic` -> `vocoder` -> PCM, by BLS.

Inputs and outputs are the end-to-end `speech` model's (tritonkit:ensembles/tts.yaml), so `tts` and `tts_stream`
work unchanged over it. Each segment is one call to the acoustic model (parameter `acoustic_model`) with the
request's speed as its pace, then one call to the vocoder (parameter `vocoder_model`); the audio is joined
(`tts_runtime.runtime.three_stage`). A voice, a speed out of range or inconsistent segments are the request's
INVALID_ARG error; a failing callee is named in the error.
"""
import json
import os
import sys

import numpy as np
import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bls_runtime import Callees, RequestError, respond
from tts_runtime.frontend import MAX_TOKENS
from tts_runtime.runtime.serving import optional_input, parameters, speed_of, unpack_segments
from tts_runtime.runtime.three_stage import ACOUSTIC_OUTPUTS, VOCODER_OUTPUTS, ThreeStage


class TritonPythonModel:
    def initialize(self, args):
        params = parameters(json.loads(args["model_config"]))
        callees = Callees(args, pb_utils)
        timeout_s = float(params.get("call_timeout_s", "60"))
        acoustic, vocoder = params.get("acoustic_model", "acoustic"), params.get("vocoder_model", "vocoder")
        self.stages = ThreeStage(lambda inputs: callees.call(acoustic, inputs, ACOUSTIC_OUTPUTS, timeout_s),
                                 lambda inputs: callees.call(vocoder, inputs, VOCODER_OUTPUTS, timeout_s))

    def execute(self, requests):
        return respond(pb_utils, requests, self._answer)

    def _answer(self, request):
        try:
            segments = unpack_segments(optional_input(pb_utils, request, "tokens"),
                                       optional_input(pb_utils, request, "segment_lengths"), MAX_TOKENS)
            if optional_input(pb_utils, request, "voice") is not None:
                raise ValueError("this speech model (acoustic -> vocoder) has one voice; leave voice out")
            audio, rate = self.stages.synthesize(segments, speed_of(optional_input(pb_utils, request, "speed")))
        except ValueError as exc:
            raise RequestError(str(exc)) from None
        return {"audio": audio[None].astype(np.float32), "sample_rate": np.array([[rate]], dtype=np.int32)}
