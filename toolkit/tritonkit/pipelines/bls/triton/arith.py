"""A callee of the BLS examples: Y = an elementwise operation on X, chosen by parameter `operation`.

Refuses non-finite values, so a caller's error propagation can be seen end to end.
"""
import json
import os
import sys

import numpy as np
import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bls_runtime import RequestError, respond

OPERATIONS = {"double": lambda x: x * 2, "negate": lambda x: -x, "halve": lambda x: x / 2}


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        name = config["parameters"]["operation"]["string_value"]
        if name not in OPERATIONS:
            raise ValueError(f"parameter operation is '{name}'; use one of {sorted(OPERATIONS)}")
        self.operation = OPERATIONS[name]

    def execute(self, requests):
        return respond(pb_utils, requests, self.answer)

    def answer(self, request):
        x = pb_utils.get_input_tensor_by_name(request, "X").as_numpy()
        if not np.isfinite(x).all():
            raise RequestError("X must be finite")
        return {"Y": self.operation(x).astype(np.float32)}
