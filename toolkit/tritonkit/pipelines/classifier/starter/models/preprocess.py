"""Python-backend model: standardizes 4 raw features (requests arrive batched by Triton's dynamic batcher)."""
import numpy as np
import triton_python_backend_utils as pb_utils

MEAN = np.array([5.8, 3.0, 3.8, 1.2], dtype=np.float32)
STD = np.array([0.8, 0.4, 1.8, 0.8], dtype=np.float32)


class TritonPythonModel:
    """RAW [batch, 4] -> FEATURES [batch, 4] = (RAW - MEAN) / STD."""

    def execute(self, requests):
        responses = []
        for request in requests:
            raw = pb_utils.get_input_tensor_by_name(request, "RAW").as_numpy()
            features = ((raw - MEAN) / STD).astype(np.float32)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("FEATURES", features)]))
        return responses
