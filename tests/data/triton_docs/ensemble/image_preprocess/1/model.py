"""Raw bytes -> [3, 32, 32] float image: pads or truncates to 3072 values and scales to [0, 1]."""
import numpy as np
import triton_python_backend_utils as pb_utils

SIZE = 3 * 32 * 32


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            raw = pb_utils.get_input_tensor_by_name(request, "RAW_IMAGE").as_numpy()
            out = np.zeros((raw.shape[0], SIZE), dtype=np.float32)
            width = min(raw.shape[1], SIZE)
            out[:, :width] = raw[:, :width] / 255.0
            tensor = pb_utils.Tensor("PREPROCESSED", out.reshape(raw.shape[0], 3, 32, 32))
            responses.append(pb_utils.InferenceResponse(output_tensors=[tensor]))
        return responses
