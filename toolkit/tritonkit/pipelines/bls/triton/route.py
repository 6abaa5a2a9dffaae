"""BLS routing: MODE 0 sends X to `double`, MODE 1 to `negate`; the callee's answer is Y."""
import os
import sys

import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bls_runtime import Callees, RequestError, respond

ROUTES = {0: "double", 1: "negate"}
TIMEOUT_S = 5.0


class TritonPythonModel:
    def initialize(self, args):
        self.callees = Callees(args, pb_utils)

    def execute(self, requests):
        return respond(pb_utils, requests, self.answer)

    def answer(self, request):
        x = pb_utils.get_input_tensor_by_name(request, "X").as_numpy()
        mode = int(pb_utils.get_input_tensor_by_name(request, "MODE").as_numpy().reshape(-1)[0])
        if mode not in ROUTES:
            raise RequestError(f"MODE must be one of {sorted(ROUTES)}, got {mode}")
        y = self.callees.call(ROUTES[mode], {"X": x[None]}, ["Y"], timeout_s=TIMEOUT_S)["Y"]
        return {"Y": y[0]}
