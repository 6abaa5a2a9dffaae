"""Parses config text into Triton's ModelConfig protobuf and checks it survives a round trip."""
from __future__ import annotations

from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from tritonkit.errors import TritonkitError

ModelConfig = model_config_pb2.ModelConfig


def parse_model_config(text: str, shown: str, field_prefix: str = "") -> ModelConfig:
    """The parsed message; a parse error becomes a one-line problem naming the line and field."""
    try:
        config = text_format.Parse(text, ModelConfig())
    except text_format.ParseError as exc:
        where = f"{field_prefix}line {exc.GetLine()}" if exc.GetLine() else field_prefix.rstrip(".")
        message = str(exc).split(" : ", 1)[-1]
        raise TritonkitError(shown, where, f"not a valid Triton ModelConfig: {message}", "fix that field (see Triton's model_config.proto)") from None
    again = text_format.Parse(text_format.MessageToString(config), ModelConfig())
    if again != config:
        raise TritonkitError(shown, field_prefix.rstrip("."), "config does not survive a protobuf round trip", "report this as a tritonkit bug")
    return config

