"""Test BLS caller: calls `sleepy` with the timeout the client sends in TIMEOUT_S."""
import os
import sys

import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bls_runtime import Callees, respond


class TritonPythonModel:
    def initialize(self, args):
        self.callees = Callees(args, pb_utils)

    def execute(self, requests):
        return respond(pb_utils, requests, self.answer)

    def answer(self, request):
        seconds = pb_utils.get_input_tensor_by_name(request, "SECONDS").as_numpy()
        timeout_s = float(pb_utils.get_input_tensor_by_name(request, "TIMEOUT_S").as_numpy().reshape(-1)[0])
        out = self.callees.call("sleepy", {"SECONDS": seconds[None]}, ["SECONDS"], timeout_s=timeout_s)
        return {"SECONDS": out["SECONDS"][0]}
