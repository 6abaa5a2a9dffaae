"""`tritonkit serve`: run a model repository on the embedded Triton 2.51 (no Docker, no GPU needed)."""
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from tritonkit.cli.output import emit_json, json_option, reports_errors
from tritonkit.cli.terminal import StatusLine
from tritonkit.errors import TritonkitError
from tritonkit.serve.background import running_state, stale_message, start_background, take_stale
from tritonkit.serve.ports import exposure_warning
from tritonkit.serve.server import EmbeddedServer, Progress, ServerExited
from tritonkit.serve.state import STATE_DIR, clear_state, read_state, state_path, write_state
from tritonkit.spec.gateway import GatewaySpec
from tritonkit.triton.s3url import parse_s3_url

#: A TCP port: a value outside 1-65535 is one usage line naming the option (exit 2), not bind()'s OverflowError.
PORT = click.IntRange(1, 65535)
PORT.name = "integer"  # "'abc' is not a valid integer", as for a plain int option


def _summary(server: EmbeddedServer, mode: str) -> dict[str, Any]:
    return {
        "ok": True, "mode": mode, "pid": server.pid,
        "http": server.http_url, "grpc": server.grpc_url, "metrics": server.metrics_url,
        "log": str(server.log_path), "repository": server.remote or str(server.repository),
        "serving_repository": str(server.serving.path) if server.serving else None,
        "models": [{"name": m.name, "version": m.version, "state": m.state} for m in server.models],
        "fallbacks": [fb.__dict__ for fb in server.serving.fallbacks] if server.serving else [],
    }


def _print_summary(server: EmbeddedServer) -> None:
    names = sorted({m.name for m in server.models})
    click.echo(f"Triton ready: {len(names)} models ({', '.join(names)})")
    for fallback in server.serving.fallbacks if server.serving else ():
        click.echo(f"  {fallback.describe()}")
    click.echo(f"  HTTP    {server.http_url}\n  gRPC    {server.grpc_url}\n  metrics {server.metrics_url}/metrics")
    click.echo(f"  log     {server.log_path}")


def _start_gateway(server: EmbeddedServer, port: int | None) -> subprocess.Popen:
    """`tritonkit gateway` in front of the server just started (same host; the spec's gateway: section applies)."""
    repository = server.remote or str(server.repository)
    args = ["--triton", server.grpc_url, "--repository", repository, "--host", server.host,
            *(["--port", str(port)] if port else [])]
    return subprocess.Popen([sys.executable, "-m", "tritonkit", "gateway", *args], stdin=subprocess.DEVNULL)


def _startup_line(line: StatusLine) -> Callable[[Progress], None]:
    """Startup progress: one line updated in place on a terminal; in a pipe a single start line (the ready
    line follows), not one line a second."""
    return lambda p: line.update(p.line() if line.live
                                 else "starting Triton" + (f": {p.total} models to load" if p.total else ""))


def _serve_foreground(server: EmbeddedServer, as_json: bool, gateway_port: int | None, gateway: bool,
                      line: StatusLine) -> None:
    """Runs until Ctrl-C, SIGTERM or `tritonkit stop`; a server that dies is reported with its log tail."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stops as Ctrl-C does
    existing = running_state(server.work_dir)
    if existing is not None:
        raise TritonkitError(str(state_path(server.work_dir)), "", "a server is already running for this project (pid "
                             f"{existing.pid}, http {existing.host}:{existing.http_port})",
                             "stop it: tritonkit stop")
    front: subprocess.Popen | None = None
    try:
        with line:
            server.start()
        write_state(server.work_dir, server.state())  # lets `tritonkit stop` and `tritonkit perf` find it
        front = _start_gateway(server, gateway_port) if gateway else None
        if as_json:
            emit_json(_summary(server, "foreground"))
        else:
            _print_summary(server)
        click.echo("Serving; press Ctrl-C to stop.", err=True)
        server.wait(on_restart=lambda event: click.echo(f"warning: {event.describe()}", err=True))
    except ServerExited as exc:
        if read_state(server.work_dir) is None:  # `tritonkit stop` clears the state before it signals
            click.echo("Triton stopped by tritonkit stop.", err=True)
            return
        click.echo("\n".join(["last lines of the server log:", *exc.log_tail]), err=True)
        raise
    except KeyboardInterrupt:
        click.echo("stopping Triton", err=True)
    finally:
        if front is not None:
            front.terminate()
            front.wait(timeout=15)
        server.stop()
        state = read_state(server.work_dir)
        if state is not None and server.proc is not None and state.pid == server.proc.pid:
            clear_state(server.work_dir)


@click.command("serve")
@click.argument("directory", default="model_repository")
@click.option("--http-port", type=PORT, help="HTTP port (default: a free port).")
@click.option("--grpc-port", type=PORT, help="gRPC port (default: a free port).")
@click.option("--metrics-port", type=PORT, help="Metrics port (default: a free port).")
@click.option("--endpoint-url", help="S3-compatible endpoint of an s3://BUCKET/PREFIX repository (default: "
              "AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, else AWS); credentials come from the AWS_* environment.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address the endpoints bind to; any other than "
              "loopback gets a warning (Triton asks for no credentials).")
@click.option("--foreground/--background", default=True, show_default=True,
              help="Stay attached until Ctrl-C, or return once ready and leave the server running.")
@click.option("--onnx-threads", type=click.IntRange(min=1), help="Intra-op threads of each ONNX fallback instance "
              "(default: the model's intra_op_thread_count, else cores / instances).")
@click.option("--startup-timeout", default=180.0, show_default=True, help="Seconds to wait for all models.")
@click.option("--gateway", is_flag=True, help="Also run `tritonkit gateway` (OpenAI-compatible /v1 routes) in front "
              "of it, on the same host; foreground only.")
@click.option("--gateway-port", type=PORT, help="The gateway's port [default: gateway.port of ./tritonkit.yaml, "
              f"{GatewaySpec.model_fields['port'].default}].")
@json_option
@reports_errors
def serve_command(directory: str, endpoint_url: str | None, host: str, foreground: bool, onnx_threads: int | None,
                  gateway: bool, gateway_port: int | None, as_json: bool, **ports: Any) -> None:
    """Serve the model repository DIRECTORY (a folder, or one published to s3://) with an embedded Triton 2.51.

    ONNX Runtime, TensorRT (via the model.onnx kept beside the plan) and PyTorch models with an ONNX file
    run as generated Python-backend models on onnxruntime (CPU); the command lists them. The built
    repository is not modified: the served copy lives in .tritonkit/serving/. A model that fails to load
    is named with Triton's reason and the command exits with code 2. An s3:// repository (`tritonkit
    publish`) is read by Triton itself in explicit mode, every model loaded; it runs as published (ONNX
    Runtime models on a stand-in onnxruntime backend, TensorRT and PyTorch ones not at all), and smoke
    takes its expectations from the built folder (-r) as usual.

    \b
    Examples:
      tritonkit serve                              # model_repository/, free ports, Ctrl-C stops
      tritonkit serve build/repo --http-port 8000 --grpc-port 8001 --metrics-port 8002
      tritonkit serve --background --json          # returns when ready; `tritonkit stop` stops it
      tritonkit serve s3://models/prod --endpoint-url http://127.0.0.1:9000   # MinIO; AWS_* credentials
      tritonkit serve s3://127.0.0.1:9000/models/prod                         # Triton's own spelling
    """
    if gateway and not foreground:
        raise click.UsageError("--gateway runs with the foreground server; after --background start it "
                               "with `tritonkit gateway`")
    if onnx_threads is not None and directory.startswith("s3://"):  # no config of a published repository is rewritten
        ctx = click.get_current_context()
        raise click.BadParameter("sets the ONNX fallback of a local repository; a published one runs its models as "
                                 "published (their intra_op_thread_count)", ctx=ctx,
                                 param=next(p for p in ctx.command.params if p.name == "onnx_threads"))
    work_dir = Path.cwd() / STATE_DIR
    stale = take_stale(work_dir)
    if stale is not None:
        click.echo(f"note: {stale_message(work_dir, stale)}", err=True)
    exposed = exposure_warning(host)
    if exposed is not None:
        click.echo(exposed, err=True)
    repository = parse_s3_url(directory, endpoint_url).for_triton if directory.startswith("s3://") else Path(directory)
    line = StatusLine(enabled=not as_json)
    # ports: the --*-port options and --startup-timeout, named as EmbeddedServer names them
    server = EmbeddedServer(repository, host=host, work_dir=work_dir, onnx_threads=onnx_threads,
                            progress=_startup_line(line), detach=not foreground, **ports)
    if foreground:
        _serve_foreground(server, as_json, gateway_port, gateway, line)
        return
    with line:
        start_background(server)
    if as_json:
        emit_json(_summary(server, "background"))
    else:
        _print_summary(server)
        click.echo(f"Running in the background (pid {server.pid}); stop it with: tritonkit stop")
    sys.stdout.flush()
