"""Example stateful model: keeps a running sum per sequence (correlation id), reset on START, freed on END.

Triton 2.51's Python backend does not carry implicit state, so the model keeps it in a dict keyed by
the uint64 CORRID control that the sequence batcher supplies.
"""
import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    """VALUE [batch, 1] int32 -> TOTAL [batch, 1] int32, the sum of the sequence so far."""

    def initialize(self, args):
        self.totals = {}

    def execute(self, requests):
        responses = []
        for request in requests:
            value = pb_utils.get_input_tensor_by_name(request, "VALUE").as_numpy()
            start = pb_utils.get_input_tensor_by_name(request, "START").as_numpy()
            end = pb_utils.get_input_tensor_by_name(request, "END").as_numpy()
            corrid = pb_utils.get_input_tensor_by_name(request, "CORRID").as_numpy()
            totals = np.zeros_like(value)
            for row in range(value.shape[0]):
                key = int(corrid[row].reshape(-1)[0])
                if int(start[row].reshape(-1)[0]):
                    self.totals[key] = 0
                self.totals[key] = self.totals.get(key, 0) + int(value[row].reshape(-1)[0])
                totals[row] = self.totals[key]
                if int(end[row].reshape(-1)[0]):
                    self.totals.pop(key, None)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("TOTAL", totals.astype(np.int32))]))
        return responses
