"""Running sum per sequence: reset on START, dropped on END; slots that are not READY are skipped."""
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

            value, start, end, ready, corrid = (first(n) for n in ("INPUT", "START", "END", "READY", "CORRID"))
            out = np.zeros((len(value), 1), dtype=np.int32)
            for row in range(len(value)):
                if not ready[row]:
                    continue
                key = int(corrid[row])
                total = (0 if start[row] else self.sums.get(key, 0)) + int(value[row])
                out[row, 0] = total
                if end[row]:
                    self.sums.pop(key, None)
                else:
                    self.sums[key] = total
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUTPUT", out)]))
        return responses
