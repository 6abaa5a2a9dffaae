"""The `gateway:` section of tritonkit.yaml: the OpenAI-compatible gateway's address, keys, limits and model ids."""
from typing import Annotated

from pydantic import Field

from tritonkit import __version__
from tritonkit.spec.base import StrictModel, env_variable


class GatewayModelSpec(StrictModel):
    """One model id the gateway offers (`model` in OpenAI requests) and the pipeline that serves it."""

    pipeline: str   # a pipeline with OpenAI routes: `schema.py` narrows it to the installed ones
    model: str | None = Field(default=None, description="The Triton model it calls; default: the pipeline's.")


class GatewaySpec(StrictModel):
    """`tritonkit gateway`: OpenAI's /v1 routes in front of the pipelines Triton serves."""

    host: str = Field(default="127.0.0.1", description="Address it binds; any other than loopback gets a warning.")
    port: int = Field(default=9100,
                      ge=1, le=65535, description="Not 9000: KServe gives Triton's gRPC that port in the pod.")
    api_key_env: Annotated[str, env_variable("TRITONKIT_API_KEY")] = Field(
        default="TRITONKIT_API_KEY", description="Environment variable holding the API key(s), comma-separated; when "
        "set, every request needs 'Authorization: Bearer <key>'.")
    api_key_file: str | None = Field(default=None, description="A file of API keys, one a line (read at "
                                     "start, never written).")
    max_request_bytes: int = Field(default=25 * 1024 * 1024, ge=1024, description="Larger request "
                                   "bodies are refused (413).")
    image: str = Field(default=f"tritonkit-gateway:{__version__}", description="The gateway's image: compose builds "
                       "and tags it from tritonkit-gateway.Dockerfile; Kubernetes pulls it (push it to your "
                       "registry under this name).")
    base_image: str = Field(default="python:3.11-slim",
                            description="FROM of the generated tritonkit-gateway.Dockerfile, which installs "
                            "this tritonkit (its wheel, copied beside it) and tokenizers into it.")
    models: dict[str, GatewayModelSpec] = Field(default_factory=dict, description="Model id -> pipeline; default: "
                                                "each pipeline Triton serves.")
