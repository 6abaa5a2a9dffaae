"""Running sum per string correlation id; the oldest strategy may put several sequences in one batch."""
import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        self.sums = {}

    def execute(self, requests):
        responses = []
        for request in requests:
            def first(name):
                return pb_utils.get_input_tensor_by_name(request, name).as_numpy().reshape(-1)

            value, start, end, corrid = (first(n) for n in ("INPUT", "START", "END", "CORRID"))
            out = np.zeros((len(value), 1), dtype=np.float32)
            for row in range(len(value)):
                key = corrid[row]
                total = (0.0 if start[row] else self.sums.get(key, 0.0)) + float(value[row])
                out[row, 0] = total
                if end[row]:
                    self.sums.pop(key, None)
                else:
                    self.sums[key] = total
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUTPUT", out)]))
        return responses
