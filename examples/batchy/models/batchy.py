"""A Python-backend model whose every call costs 20 ms plus 1 ms per item, so batching pays (tune demo)."""
import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        inputs = [pb_utils.get_input_tensor_by_name(r, "X").as_numpy() for r in requests]
        time.sleep(0.020 + 0.001 * sum(x.shape[0] for x in inputs))
        return [pb_utils.InferenceResponse([pb_utils.Tensor("Y", (x * 2).astype(np.float32))]) for x in inputs]
