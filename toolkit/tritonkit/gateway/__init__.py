"""An OpenAI-compatible HTTP gateway in front of the pipelines served by Triton (`tritonkit gateway`).

The core (app, errors, request checks, the Triton client, auth) knows no pipeline; each pipeline's routes and
what it knows about its tensors live in its pipeline's folder (`pipelines/<name>/gateway/`, the plugin's `gateway`).
"""
