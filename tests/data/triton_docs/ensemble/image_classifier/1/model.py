"""Ten class scores from the mean intensity of each tenth of the image (a stand-in for a CNN)."""
import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            image = pb_utils.get_input_tensor_by_name(request, "INPUT").as_numpy()
            flat = image.reshape(image.shape[0], -1)
            scores = np.stack([part.mean(axis=1) for part in np.array_split(flat, 10, axis=1)], axis=1)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("SCORES", scores.astype(np.float32))]))
        return responses
