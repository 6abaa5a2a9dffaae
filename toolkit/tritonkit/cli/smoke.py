"""`tritonkit smoke`: check a running Triton server model by model, over HTTP and gRPC."""
import sys
from dataclasses import asdict
from pathlib import Path

import click

from tritonkit.cli.output import emit_json, json_option, reports_errors
from tritonkit.cli.paths import LocalFolder
from tritonkit.cli.terminal import StatusLine, echo_report
from tritonkit.serve.background import stale_error, take_stale
from tritonkit.serve.state import STATE_DIR
from tritonkit.smoke import report
from tritonkit.smoke.runner import run_smoke, stub_restart_rows
from tritonkit.smoke.target import require_server, resolve_target


@click.command("smoke")
@click.option("-r", "--repository", default="model_repository", show_default=True, type=LocalFolder(),
              help="The repository the server was started on (its configs and golden samples are the expectations).")
@click.option("--url", "http_url", help="HTTP endpoint host:port [default: the background server of this "
              "project, else localhost:8000].")
@click.option("--grpc-url", "grpc_url", help="gRPC endpoint host:port [default: the background server's when --url is "
              "its HTTP endpoint, HOST:8001 when --url is HOST:8000, else required unless --protocol http].")
@click.option("--protocol", type=click.Choice(["http", "grpc", "both"]), default="both", show_default=True)
@click.option("--model", "models", multiple=True, metavar="NAME",
              help="Check only this model (repeatable); the server's own checks still run.")
@click.option("-q", "--quiet", is_flag=True, help="Print only the failures and the total.")
@click.option("-v", "--verbose", is_flag=True, help="Print every check's row, not one row per model.")
@json_option
@reports_errors
def smoke_command(repository: Path, http_url: str | None, grpc_url: str | None, protocol: str, models: tuple[str, ...],
                  quiet: bool, verbose: bool, as_json: bool) -> None:
    """Prove every model of REPOSITORY answers correctly on a running server.

    Checks liveness and readiness, that each model is ready and serves the repository's config and
    metadata, replays golden samples (exported pairs and the spec's `smoke:` cases: requests, two
    interleaved sequences with uint64 ids, streams of decoupled models), or sends generated inputs,
    and sends bad requests (wrong dtype, wrong shape, missing input, unknown model) that must be refused
    while the server stays healthy: only an inference error from the server counts as refused, a failed
    connection does not. The report has one row per model (passed, failed, skipped) and then every failure
    with its whole message; --verbose lists every check, --quiet only the failures. On this project's
    `tritonkit serve` server, a Python-backend stub that died and was reloaded is listed as a `stub restart`
    row. A decoupled model must stream at least one response and complete. Models the server runs through
    tritonkit's onnxruntime fallback are marked as such. Exits 1 if any check fails; no server at an
    endpoint to check is one line and exit 2.

    \b
    Example:
      tritonkit serve --background && tritonkit smoke
      tritonkit smoke --url triton.internal:8000 --grpc-url triton.internal:8001 --json
      tritonkit smoke --url 127.0.0.1:18000 --protocol http   # HTTP checks only
      tritonkit smoke --model classify --model preprocess --quiet
    """
    protocols = ["http", "grpc"] if protocol == "both" else [protocol]
    stale = take_stale(Path.cwd() / STATE_DIR)
    if stale is not None and http_url is None and grpc_url is None:
        raise stale_error(Path.cwd() / STATE_DIR, stale)
    target = resolve_target(http_url, grpc_url, protocols)
    require_server(target, protocols)
    selection = list(models) or None
    with StatusLine(every=True, enabled=not (as_json or quiet)) as line:
        results = run_smoke(repository, target, protocols, progress=lambda m: line.update(f"checking {m}"),
                            models=selection)
    if selection is None:
        results += stub_restart_rows(target)
    if as_json:
        emit_json(report.as_json(results, asdict(target), selection))
    else:
        echo_report(report.text(results, quiet=quiet, verbose=verbose))
    if any(r.status == "fail" for r in results):
        sys.exit(1)
