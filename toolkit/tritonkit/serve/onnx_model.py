"""Triton Python-backend adapter for the ONNX fallback: Triton requests in, `OnnxRunner` results out.

Copied as `model.py` into a fallback model's version folder, next to `tritonkit_onnx_runner.py` (a copy of
`onnx_runner.py`). Everything except moving tensors between Triton and numpy lives in the runner.
"""
import json
import os
import sys

try:
    import triton_python_backend_utils as pb_utils
except ImportError:  # outside Triton (tests, tooling): importable, but `execute` needs Triton
    pb_utils = None

if __name__ == "tritonkit.serve.onnx_model":  # imported from the package (tests, tooling)
    from .onnx_runner import OnnxRunner
else:  # loaded by the Python backend as model.py, next to its copy of the runner
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from tritonkit_onnx_runner import OnnxRunner  # type: ignore[no-redef]

#: Config parameter naming the ONNX file in the version folder (written by tritonkit's fallback).
ONNX_FILE_PARAMETER = "tritonkit_onnx_file"


class TritonPythonModel:
    """Serves one ONNX model; all requests Triton batches together run as one onnxruntime call."""

    def initialize(self, args):
        config = json.loads(args["model_config"])
        onnx_file = config.get("parameters", {}).get(ONNX_FILE_PARAMETER, {}).get("string_value", "model.onnx")
        version_dir = os.path.join(args["model_repository"], args["model_version"])
        self.runner = OnnxRunner.from_model_config(config, version_dir, onnx_file)

    def execute(self, requests):
        feeds = [{t.name(): t.as_numpy() for t in request.inputs()} for request in requests]
        responses = []
        for request, result in zip(requests, self.runner.run_requests(feeds)):
            if isinstance(result, Exception):
                responses.append(pb_utils.InferenceResponse(error=pb_utils.TritonError(str(result))))
                continue
            wanted = set(request.requested_output_names()) or set(result)
            tensors = [pb_utils.Tensor(name, value) for name, value in result.items() if name in wanted]
            responses.append(pb_utils.InferenceResponse(output_tensors=tensors))
        return responses
