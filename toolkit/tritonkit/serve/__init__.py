"""The embedded Triton server: runtime from the nvidia-pytriton wheel, process lifecycle, ONNX fallbacks.

Entry points (imported from their modules so `import tritonkit.serve` stays cheap):
  tritonkit.serve.server.EmbeddedServer        start/stop one server on a repository (context manager)
  tritonkit.serve.background.start_background  start detached and record it in .tritonkit/server.json
  tritonkit.serve.background.stop_recorded     stop the recorded server (what `tritonkit stop` does)
  tritonkit.serve.serving.build_serving_repository   the served copy with ONNX fallbacks
  tritonkit.serve.runtime.prepare_runtime      the runnable Triton and its environment
  tritonkit.serve.perf.run_perf                perf_analyzer with that environment
"""
