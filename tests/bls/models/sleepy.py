"""Test callee: sleeps SECONDS, then echoes it; with one instance, a second request waits in Triton's queue."""
import time

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            seconds = pb_utils.get_input_tensor_by_name(request, "SECONDS").as_numpy()
            time.sleep(float(seconds.reshape(-1)[0]))
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("SECONDS", seconds)]))
        return responses
