"""`tritonkit init`: copies a pipeline's starter folder (`tritonkit/pipelines/<name>/starter/`) into a project."""
