"""Python-backend model: a fixed linear classifier with softmax over 3 classes (swap in your own model here)."""
import numpy as np
import triton_python_backend_utils as pb_utils

WEIGHTS = np.array([[-1.0, 1.2, -1.8, -1.7], [0.4, -0.9, 0.3, -0.2], [0.6, -0.3, 1.5, 1.9]], dtype=np.float32)
BIAS = np.array([0.5, 1.0, -1.5], dtype=np.float32)


class TritonPythonModel:
    """FEATURES [batch, 4] -> PROBS [batch, 3]."""

    def execute(self, requests):
        responses = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "FEATURES").as_numpy()
            logits = x @ WEIGHTS.T + BIAS
            exp = np.exp(logits - logits.max(axis=-1, keepdims=True))
            probs = (exp / exp.sum(axis=-1, keepdims=True)).astype(np.float32)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("PROBS", probs)]))
        return responses
