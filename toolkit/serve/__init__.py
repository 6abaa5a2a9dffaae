"""The embedded Triton server: runtime from the nvidia-pytriton wheel, process lifecycle, ONNX fallbacks.

Public entry points: `EmbeddedServer` (start/stop a server on a repository), `stop_recorded` (stop the
server a background `tritonkit serve` left running), `build_serving_repository`, `prepare_runtime`.
"""
