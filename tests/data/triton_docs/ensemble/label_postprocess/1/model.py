"""SCORES [10] -> LABEL [1]: the name of the highest-scoring class."""
import numpy as np
import triton_python_backend_utils as pb_utils

LABELS = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            scores = pb_utils.get_input_tensor_by_name(request, "SCORES").as_numpy()
            labels = np.array([[LABELS[i].encode()] for i in scores.argmax(axis=1)], dtype=np.object_)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("LABEL", labels)]))
        return responses
