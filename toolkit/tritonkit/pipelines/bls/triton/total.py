"""BLS over a stream: sums the responses `count` streams for N and answers once (SUM, RESPONSES)."""
import os
import sys

import numpy as np
import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bls_runtime import Callees, respond

TIMEOUT_S = 5.0


class TritonPythonModel:
    def initialize(self, args):
        self.callees = Callees(args, pb_utils)

    def execute(self, requests):
        return respond(pb_utils, requests, self.answer, decoupled=True)

    def answer(self, request):
        n = pb_utils.get_input_tensor_by_name(request, "N").as_numpy()
        values = [int(r["Y"][0]) for r in self.callees.stream("count", {"N": n}, ["Y"], timeout_s=TIMEOUT_S)]
        return {"SUM": np.array([sum(values)], dtype=np.int64), "RESPONSES": np.array([len(values)], dtype=np.int32)}
