"""Streams IN back one element per response, each after its DELAY (microseconds), then closes the stream."""
import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        for request in requests:
            sender = request.get_response_sender()
            values = pb_utils.get_input_tensor_by_name(request, "IN").as_numpy()
            delays = pb_utils.get_input_tensor_by_name(request, "DELAY").as_numpy()
            wait = pb_utils.get_input_tensor_by_name(request, "WAIT")
            for index, value in enumerate(values):
                time.sleep(int(delays[index % len(delays)]) / 1e6 if len(delays) else 0)
                outputs = [
                    pb_utils.Tensor("OUT", np.array([value], dtype=np.int32)),
                    pb_utils.Tensor("IDX", np.array([index], dtype=np.uint32)),
                ]
                sender.send(pb_utils.InferenceResponse(output_tensors=outputs))
            if wait is not None:
                time.sleep(int(wait.as_numpy()[0]) / 1e6)
            sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return None
