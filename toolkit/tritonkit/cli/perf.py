"""`tritonkit perf`: measure a served model with perf_analyzer and report throughput and latency."""
from pathlib import Path
from typing import Any

import click

from tritonkit.cli.output import emit_json, json_option, reports_errors
from tritonkit.serve.background import running_state, stale_error, take_stale
from tritonkit.serve.perf import PerfOptions, run_perf
from tritonkit.serve.state import STATE_DIR


def _default_url(protocol: str) -> str:
    """The project's running `tritonkit serve` server if there is one, else Triton's default port.

    A state file left by a server that died is an error, not a silent switch to the default port."""
    stale = take_stale(Path.cwd() / STATE_DIR)
    if stale is not None:
        raise stale_error(Path.cwd() / STATE_DIR, stale)
    state = running_state(Path.cwd() / STATE_DIR)
    if state is not None:
        return f"{state.host}:{state.grpc_port if protocol == 'grpc' else state.http_port}"
    return "127.0.0.1:8001" if protocol == "grpc" else "127.0.0.1:8000"


@click.command("perf", context_settings={"ignore_unknown_options": True})
@click.argument("model")
@click.option("-u", "--url", help="Server address HOST:PORT [default: this project's `tritonkit serve` server, else "
              "127.0.0.1:8001 (gRPC) / 127.0.0.1:8000 (HTTP)].")
@click.option("-i", "--protocol", type=click.Choice(["grpc", "http"]), default="grpc", show_default=True)
@click.option("--concurrency", default="1:4:1", show_default=True,
              help="Concurrency range START:END:STEP, or one value.")
@click.option("-b", "--batch-size", default=1, show_default=True, help="Batch size of each request.")
@click.option("--shape", "shapes", multiple=True, help="NAME:DIMS for inputs with variable dims, e.g. TOKENS:128.")
@click.option("--input-data", help="zero, random, or a JSON data file (perf_analyzer --input-data).")
@click.option("--measurement-request-count", default=100, show_default=True, help="Requests per measurement window.")
@click.option("--stability-percentage", default=20.0, show_default=True,
              help="Allowed spread between windows (perf_analyzer's default of 10 is often too tight on CPUs).")
@click.option("--max-trials", default=10, show_default=True, help="Windows per level before giving up.")
@click.option("--request-count", type=int, help="Measure exactly this many requests (one concurrency value only).")
@click.option("--csv", "csv_file", type=click.Path(path_type=Path), help="Also keep perf_analyzer's CSV report here.")
@click.option("--timeout", default=900.0, show_default=True, help="Seconds before giving up on perf_analyzer.")
@click.argument("extra_args", nargs=-1, type=click.UNPROCESSED)
@json_option
@reports_errors
def perf_command(model: str, url: str | None, protocol: str, shapes: tuple[str, ...], csv_file: Path | None,
                 timeout: float, extra_args: tuple[str, ...], as_json: bool, **settings: Any) -> None:
    """Run perf_analyzer (tritonclient 2.51) against MODEL and print throughput and latency per concurrency.

    Measurement uses count windows. Arguments after `--` go to perf_analyzer unchanged.

    \b
    Examples:
      tritonkit serve --background && tritonkit perf text_encoder --concurrency 1:8:1
      tritonkit perf text_encoder -u 10.0.0.5:8001 --shape TOKENS:128 --csv perf.csv --json
      tritonkit perf text_encoder -- --async --max-threads 8
    """
    opts = PerfOptions(model=model, url=url or _default_url(protocol), protocol=protocol, shapes=list(shapes),
                       extra_args=list(extra_args), **settings)  # the other options are PerfOptions' fields
    result = run_perf(opts, csv_out=csv_file, timeout=timeout)
    if as_json:
        emit_json({"ok": True, "model": model, "url": opts.url, "protocol": protocol, "rows": result.rows})
        return
    click.echo(f"{model} at {opts.url} ({protocol}), batch size {opts.batch_size}")
    click.echo(f"{'concurrency':>11} {'infer/s':>10} {'p50 us':>9} {'p95 us':>9} {'p99 us':>9}")
    for row in result.rows:
        click.echo(f"{row.get('concurrency', '-'):>11} {row.get('throughput_infer_per_sec', 0):>10.1f} "
                   f"{row.get('p50_latency_us', '-'):>9} {row.get('p95_latency_us', '-'):>9} "
                   f"{row.get('p99_latency_us', '-'):>9}")
