"""Kitchen-sink Python model: echoes every input tensor to the output of the same position."""
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        import json

        config = json.loads(args["model_config"])
        self.pairs = list(zip([i["name"] for i in config["input"]], [o["name"] for o in config["output"]]))

    def execute(self, requests):
        responses = []
        for request in requests:
            tensors = [
                pb_utils.Tensor(out, pb_utils.get_input_tensor_by_name(request, inp).as_numpy())
                for inp, out in self.pairs
            ]
            responses.append(pb_utils.InferenceResponse(tensors))
        return responses
