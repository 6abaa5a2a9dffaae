"""A decoupled callee of the BLS examples: for N it streams Y = 1, 2, ..., N, then the final flag."""
import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        for request in requests:
            sender = request.get_response_sender()
            n = int(pb_utils.get_input_tensor_by_name(request, "N").as_numpy().reshape(-1)[0])
            if n < 0:
                error = pb_utils.TritonError(f"N must be >= 0, got {n}")
                sender.send(pb_utils.InferenceResponse(output_tensors=[], error=error),
                            flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
                continue
            for value in range(1, n + 1):
                sender.send(pb_utils.InferenceResponse([pb_utils.Tensor("Y", np.array([value], dtype=np.int32))]))
            sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return None
