"""`tritonkit gateway`: OpenAI-compatible /v1 routes in front of the pipelines a running Triton serves."""
from __future__ import annotations

from pathlib import Path

import click

from tritonkit.cli.output import reports_errors
from tritonkit.errors import TritonkitError
from tritonkit.serve.state import STATE_DIR, read_state
from tritonkit.spec.gateway import GatewaySpec

PORT = click.IntRange(1, 65535)


def _spec_section(spec: Path | None) -> GatewaySpec:
    path = spec or Path("tritonkit.yaml")
    if spec is None and not path.is_file():
        return GatewaySpec()
    from tritonkit.spec.loader import load_project

    return load_project(path).gateway


def _triton_url(triton: str | None) -> str:
    if triton:
        return triton
    state = read_state(Path.cwd() / STATE_DIR)
    if state is None:
        raise TritonkitError("", "--triton", "no Triton server is recorded in ./.tritonkit/server.json",
                             "start one with `tritonkit serve --background`, or pass --triton HOST:GRPC_PORT")
    return f"{state.host}:{state.grpc_port}"


@click.command("gateway")
@click.option("--triton", help="Triton's gRPC endpoint HOST:PORT [default: the server `tritonkit serve` recorded here].")
@click.option("--repository", type=click.Path(path_type=Path), default=Path("model_repository"), show_default=True,
              help="The built repository Triton serves (the LLM's chat format and tokenizer are read from it).")
@click.option("--spec", type=click.Path(path_type=Path, dir_okay=False), help="tritonkit.yaml whose gateway: section "
              "applies [default: ./tritonkit.yaml when present].")
@click.option("--host", help="Address to bind [default: gateway.host, 127.0.0.1]; beyond loopback gets a warning.")
@click.option("--port", type=PORT, help="Port [default: gateway.port, 9000].")
@click.option("--api-key-file", type=click.Path(path_type=Path, dir_okay=False),
              help="File of API keys, one a line [default: gateway.api_key_file; keys also come from gateway.api_key_env's variable].")
@reports_errors
def gateway_command(triton: str | None, repository: Path, spec: Path | None, host: str | None, port: int | None,
                    api_key_file: Path | None) -> None:
    """Serve OpenAI-compatible /v1 routes (chat, completions, speech, transcriptions) in front of Triton.

    \b
    Examples:
      tritonkit serve --background && tritonkit gateway      # the recorded server, 127.0.0.1:9000
      TRITONKIT_API_KEY=secret tritonkit gateway --host 0.0.0.0 --triton 127.0.0.1:8001
      curl localhost:9000/v1/chat/completions -d '{"model": "llm", "messages": [{"role": "user", "content": "Hi"}]}'
    """
    from tritonkit.gateway.server import config_of, exposure_warning, run

    section = _spec_section(spec)
    config = config_of(section, _triton_url(triton), repository, api_key_file)
    bind = host or section.host
    warning = exposure_warning(bind, config.api_keys)
    if warning:
        click.echo(warning, err=True)
    chosen = port or section.port
    click.echo(f"OpenAI gateway on http://{bind}:{chosen}/v1 -> Triton {config.triton_url}"
               f"{' (API keys required)' if config.api_keys else ''}", err=True)
    run(config, bind, chosen)
