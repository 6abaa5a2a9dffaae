"""Example decoupled (streaming) model: for input N it streams N, N-1, ..., 1 as separate responses.

N above MAX_N is refused with an error: a client asking for 2**31 - 1 responses would otherwise keep the
model's only instance busy for hours (found by tests/fuzz/test_request_fuzz.py).
"""
import numpy as np
import triton_python_backend_utils as pb_utils

MAX_N = 1000


class TritonPythonModel:
    """N [1] int32 -> a stream of OUT [1] int32 responses, then the final flag."""

    def execute(self, requests):
        for request in requests:
            sender = request.get_response_sender()
            n = int(pb_utils.get_input_tensor_by_name(request, "N").as_numpy().reshape(-1)[0])
            if n > MAX_N:
                error = pb_utils.TritonError(f"N is {n}; at most {MAX_N} responses are streamed")
                final = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL
                sender.send(pb_utils.InferenceResponse(error=error), flags=final)
                continue
            for value in range(n, 0, -1):
                sender.send(pb_utils.InferenceResponse([pb_utils.Tensor("OUT", np.array([value], dtype=np.int32))]))
            sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return None
