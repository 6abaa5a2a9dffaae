"""`tritonkit stop`: stop the server that `tritonkit serve` started for this project."""
import time
from pathlib import Path

import click

from tritonkit.cli.output import emit_json, json_option, reports_errors
from tritonkit.serve.background import stale_message, stop_recorded, take_stale
from tritonkit.serve.state import STATE_DIR


@click.command("stop")
@click.option("--timeout", default=20.0, show_default=True,
              help="Seconds to wait after SIGTERM before killing the server (SIGKILL).")
@json_option
@reports_errors
def stop_command(timeout: float, as_json: bool) -> None:
    """Stop the Triton server recorded in ./.tritonkit/server.json (background or foreground).

    Sends SIGTERM, waits for the process to exit so its ports are free, and falls back to SIGKILL after
    --timeout. Stopping when nothing runs is not an error.

    \b
    Examples:
      tritonkit serve --background && tritonkit stop
      tritonkit stop --timeout 5 --json
    """
    work_dir = Path.cwd() / STATE_DIR
    started = time.monotonic()
    stale = take_stale(work_dir)
    if stale is not None:
        click.echo(f"note: {stale_message(work_dir, stale)}", err=True)
    stopped = stop_recorded(work_dir, timeout=timeout)
    elapsed = time.monotonic() - started
    if as_json:
        emit_json({"ok": True, "stopped": stopped is not None, "stale": stale is not None,
                   "how": stopped.how if stopped else None,
                   "pid": stopped.state.pid if stopped else None, "seconds": round(elapsed, 2)})
    elif stopped is None:
        click.echo(f"no tritonkit server running for this project ({work_dir})")
    else:
        click.echo(f"stopped Triton (pid {stopped.state.pid}, http {stopped.state.host}:{stopped.state.http_port}) "
                   f"with {stopped.how.upper()} in {elapsed:.1f} s")
