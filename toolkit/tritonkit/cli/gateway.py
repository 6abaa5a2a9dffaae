"""`tritonkit gateway`: OpenAI-compatible /v1 routes in front of the pipelines a running Triton serves."""
import re
from pathlib import Path

import click
from pydantic import ValidationError

from tritonkit.cli.output import reports_errors
from tritonkit.errors import TritonkitError, shown_path
from tritonkit.gateway.server import config_of, exposure_warning, run
from tritonkit.plugin.host import installed
from tritonkit.serve.state import STATE_DIR, read_state
from tritonkit.spec.gateway import GatewaySpec
from tritonkit.spec.pydantic_errors import problems_from_validation
from tritonkit.spec.schema import spec_schema
from tritonkit.spec.yaml_source import read_yaml_mapping

PORT = click.IntRange(1, 65535)


def _spec_section(spec: Path | None) -> GatewaySpec:
    """The spec's gateway: section, read alone: the gateway needs none of the models, so a spec whose pipelines are
    mid-edit (or whose included files are not beside it) still starts it; an error in the section is one line."""
    path = spec or Path("tritonkit.yaml")
    if spec is None and not path.is_file():
        return GatewaySpec()

    shown = shown_path(path)
    section = read_yaml_mapping(path, shown).get("gateway") or {}
    try:
        return spec_schema().gateway.model_validate(section)
    except ValidationError as exc:
        raise TritonkitError.of(problems_from_validation(exc, shown, ("gateway",))) from None


def _triton_url(triton: str | None) -> str:
    if triton:
        if not re.fullmatch(r"(\[[0-9A-Fa-f:.]+\]|[^:\s/]+):\d{1,5}", triton):
            raise TritonkitError("", "--triton", f"{triton!r} is not HOST:PORT", "e.g. --triton 127.0.0.1:8001")
        return triton
    state = read_state(Path.cwd() / STATE_DIR)
    if state is None:
        raise TritonkitError("", "--triton", "no Triton server is recorded in ./.tritonkit/server.json",
                             "start one with `tritonkit serve --background`, or pass --triton HOST:GRPC_PORT")
    return f"{state.host}:{state.grpc_port}"


def _likely_grpc(url: str) -> str:
    """The gRPC address of the Triton whose HTTP or metrics port `url` is: the server recorded here, else Triton's
    default pairing (8000/8002 -> 8001)."""
    host, port = url.rpartition(":")[0], int(url.rpartition(":")[2])
    state = read_state(Path.cwd() / STATE_DIR)
    if state is not None and port in (state.http_port, state.metrics_port):
        return f"{host}:{state.grpc_port}"
    return f"{host}:8001" if port in (8000, 8002) else "its gRPC port (8001 by default)"


def _check_triton(url: str) -> None:
    """Refuses an HTTP/1.1 server at `url` (Triton's HTTP or metrics port) in one line; says in one line when nothing
    answers there (the gateway starts all the same and answers 503 naming `url` until Triton is up)."""
    from tritonkit.gateway.reach import answers_http1  # start-up: the socket probe, when the gateway starts

    try:
        http1 = answers_http1(url)
    except OSError as exc:
        click.echo(f"warning: --triton {url}: cannot reach Triton's gRPC endpoint ({exc.strerror or exc}); requests "
                   "get 503 naming it until Triton answers there", err=True)
        return
    if http1:
        raise TritonkitError("", "--triton", f"{url} answers HTTP/1.1, not gRPC: it is Triton's HTTP or metrics port",
                             f"pass Triton's gRPC port: --triton {_likely_grpc(url)}")


def _with_options(section: GatewaySpec, api_key_env: str | None, max_request_bytes: int | None,
                  models: tuple[str, ...]) -> GatewaySpec:
    """The spec section with the command line's settings over it, checked by the same schema."""
    changes: dict = {k: v for k, v in (("api_key_env", api_key_env), ("max_request_bytes", max_request_bytes)) if v}
    for item in models:
        name, _, target = item.partition("=")
        pipeline, _, model = target.partition(":")
        if not name or not pipeline:
            raise TritonkitError("", "--model", f"'{item}' is not ID=PIPELINE[:TRITON_MODEL]",
                                 "e.g. --model smollm2=llm")
        changes.setdefault("models", {})[name] = {"pipeline": pipeline, **({"model": model} if model else {})}
    if not changes:
        return section
    try:
        return spec_schema().gateway.model_validate({**section.model_dump(exclude_unset=True), **changes})
    except ValidationError as exc:
        first = exc.errors()[0]
        option = "--model" if first["loc"][0] == "models" else f"--{str(first['loc'][0]).replace('_', '-')}"
        raise TritonkitError("", option, f"{'.'.join(map(str, first['loc']))}: {first['msg']}",
                             "see tritonkit gateway --help") from None


@click.command("gateway")
@click.option("--triton",
              help="Triton's gRPC endpoint HOST:PORT [default: the server `tritonkit serve` recorded here].")
@click.option("--repository", default="model_repository", show_default=True,
              help="The repository Triton serves, a folder or s3://BUCKET/PREFIX (the LLM's chat format and tokenizer "
              "are read from it; S3 endpoint and credentials as for `tritonkit serve`).")
@click.option("--spec", type=click.Path(path_type=Path, dir_okay=False), help="tritonkit.yaml whose gateway: section "
              "applies [default: ./tritonkit.yaml when present].")
@click.option("--host", help="Address to bind [default: gateway.host, 127.0.0.1]; beyond loopback gets a warning.")
@click.option("--port", type=PORT, help="Port [default: gateway.port, 9100].")
@click.option("--api-key-file", type=click.Path(path_type=Path, dir_okay=False),
              help="File of API keys, one a line [default: gateway.api_key_file; keys also come from "
              "gateway.api_key_env's variable].")
@click.option("--api-key-env", help="Variable holding the API key(s), comma-separated [default: "
              "gateway.api_key_env, TRITONKIT_API_KEY].")
@click.option("--max-request-bytes", type=click.IntRange(1024), help="Larger bodies are refused with 413 [default: "
              "gateway.max_request_bytes, 25 MiB].")
@click.option("--model", "models", multiple=True, metavar="ID=PIPELINE[:TRITON_MODEL]",
              help="A model id and the pipeline (llm, tts, asr) serving it; repeat [default: gateway.models, else "
              "every pipeline Triton serves].")
@reports_errors
def gateway_command(triton: str | None, repository: str, spec: Path | None, host: str | None, port: int | None,
                    api_key_file: Path | None, api_key_env: str | None, max_request_bytes: int | None,
                    models: tuple[str, ...]) -> None:
    """Serve OpenAI-compatible /v1 routes (chat, completions, speech, transcriptions) in front of Triton.

    \b
    Examples:
      tritonkit serve --background && tritonkit gateway      # the recorded server, 127.0.0.1:9100
      TRITONKIT_API_KEY=secret tritonkit gateway --host 0.0.0.0 --triton 127.0.0.1:8001
      curl localhost:9100/v1/chat/completions -d '{"model": "llm", "messages": [{"role": "user", "content": "Hi"}]}'
    """
    section = _with_options(_spec_section(spec), api_key_env, max_request_bytes, models)
    routes = {name: p.gateway for name, p in installed().items() if p.gateway is not None}
    config = config_of(section, routes, _triton_url(triton), repository, api_key_file)
    _check_triton(config.triton_url)
    bind = host or section.host
    warning = exposure_warning(bind, config.api_keys)
    if warning:
        click.echo(warning, err=True)
    chosen = port or section.port
    click.echo(f"OpenAI gateway on http://{bind}:{chosen}/v1 -> Triton "
               f"{config.triton_url}{' (API keys required)' if config.api_keys else ''}", err=True)
    run(config, bind, chosen)
