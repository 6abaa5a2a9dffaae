"""Routes INPUT0/INPUT1 to the model named in MODEL_NAME ("add_sub" or "scale") and relays OUTPUT0."""
import triton_python_backend_utils as pb_utils

ROUTES = {
    "add_sub": (["INPUT0", "INPUT1"], "OUTPUT0"),
    "scale": (["INPUT0"], "SCALED"),
}


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            target = pb_utils.get_input_tensor_by_name(request, "MODEL_NAME").as_numpy().reshape(-1)[0].decode()
            if target not in ROUTES:
                error = pb_utils.TritonError(f"unknown model {target!r}; use one of {sorted(ROUTES)}")
                responses.append(pb_utils.InferenceResponse(error=error))
                continue
            inputs, output = ROUTES[target]
            call = pb_utils.InferenceRequest(
                model_name=target,
                requested_output_names=[output],
                inputs=[pb_utils.get_input_tensor_by_name(request, name) for name in inputs],
            )
            reply = call.exec()
            if reply.has_error():
                responses.append(pb_utils.InferenceResponse(error=reply.error()))
                continue
            result = pb_utils.get_output_tensor_by_name(reply, output).as_numpy()
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUTPUT0", result)]))
        return responses
