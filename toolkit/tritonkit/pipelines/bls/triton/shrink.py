"""BLS loop: calls `halve` until |X| < THRESHOLD; answers the value reached and the number of calls (STEPS)."""
import json
import os
import sys

import numpy as np
import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bls_runtime import Callees, RequestError, respond

TIMEOUT_S = 5.0


class TritonPythonModel:
    def initialize(self, args):
        self.callees = Callees(args, pb_utils)
        self.max_steps = int(json.loads(args["model_config"])["parameters"]["max_steps"]["string_value"])

    def execute(self, requests):
        return respond(pb_utils, requests, self.answer)

    def answer(self, request):
        x = pb_utils.get_input_tensor_by_name(request, "X").as_numpy().astype(np.float32)
        threshold = float(pb_utils.get_input_tensor_by_name(request, "THRESHOLD").as_numpy().reshape(-1)[0])
        if not threshold > 0:
            raise RequestError(f"THRESHOLD must be > 0, got {threshold}")
        steps = 0
        while abs(float(x[0])) >= threshold:
            if steps == self.max_steps:
                raise RequestError(f"|X| is still >= {threshold} after {steps} calls of 'halve' (parameter max_steps)")
            x = self.callees.call("halve", {"X": x[None]}, ["Y"], timeout_s=TIMEOUT_S)["Y"][0]
            steps += 1
        return {"Y": x, "STEPS": np.array([steps], dtype=np.int32)}
