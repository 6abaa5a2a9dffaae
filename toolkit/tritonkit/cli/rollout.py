"""`tritonkit rollout` and `tritonkit rollback`: running Triton servers onto published versions, or back."""
import click

from tritonkit.cli.output import emit_json, json_option, reports_errors
from tritonkit.publish.destination import open_destination, storage_errors
from tritonkit.publish.rollout import RolloutFailed, rollback, rollout
from tritonkit.smoke import report as smoke_report

_SERVER_HELP = "Triton HTTP endpoint host:port (the server must run with --model-control-mode=explicit)."
_KEY_HELP = ("Environment variable holding the admin key a server with a restricted model-repository API wants (sent "
             "only in the admin-key header, never printed).")


@click.command("rollout")
@click.argument("dest")
@click.option("--server", "servers", multiple=True, required=True, help=_SERVER_HELP + " Repeat for several servers.")
@click.option("--models", "models", multiple=True, help="Roll out only these models (repeatable) "
              "[default: every candidate].")
@click.option("--endpoint-url", help="S3-compatible endpoint of DEST (as given to publish).")
@click.option("--admin-key-env", default="TRITON_ADMIN_KEY", show_default=True, help=_KEY_HELP)
@click.option("--timeout", default=300.0, show_default=True, help="Seconds a model version may take to load.")
@json_option
@reports_errors
def rollout_command(dest: str, servers: tuple[str, ...], models: tuple[str, ...], endpoint_url: str | None,
                    admin_key_env: str, timeout: float, as_json: bool) -> None:
    """Load the versions published to DEST on running servers, check them, then retire the old ones.

    Per server: each candidate loads next to the live version (which keeps answering), its version
    becomes ready, its golden samples (and those of the ensembles using it) are replayed against it, and
    only then is the old version unloaded. Any failure puts every server back on the live versions and
    exits 1 with the reason. After all servers switched, DEST's config.pbtxt names the new versions, so a
    restarted server loads them too.

    \b
    Example:
      tritonkit publish s3://models/prod
      tritonkit rollout s3://models/prod --server triton-0:8000 --server triton-1:8000
      TRITON_ADMIN_KEY=... tritonkit rollout s3://models/prod --server 127.0.0.1:8000 --models classifier --json
    """
    destination = open_destination(dest, endpoint_url)
    say = None if as_json else (lambda line: click.echo(line, err=True))
    try:
        with storage_errors(destination.url):
            result = rollout(destination, list(servers), models=list(models) or None, admin_key_env=admin_key_env,
                             timeout=timeout, progress=say)
    except RolloutFailed as failure:
        if failure.report is not None and failure.report.checks and not as_json:
            click.echo(smoke_report.table(failure.report.checks), err=True)
        raise
    if as_json:
        emit_json({"ok": True, "servers": result.servers, "models": result.models, "rolled_back": result.rolled_back,
                   "checks": [c.as_dict() for c in result.checks]})
        return
    if result.checks:
        click.echo(smoke_report.table(result.checks))
    if not result.models:
        click.echo(f"{destination.url}: no candidate waiting for rollout")
    for name, move in result.models.items():
        click.echo(f"{name}: version {move['from']} -> {move['to']} on {len(result.servers)} server(s)")


@click.command("rollback")
@click.argument("model")
@click.option("--to", "version", required=True, type=click.IntRange(1), help="The version to serve (it must be in "
              "the server's repository).")
@click.option("--server", required=True, help=_SERVER_HELP)
@click.option("--admin-key-env", default="TRITON_ADMIN_KEY", show_default=True, help=_KEY_HELP)
@click.option("--timeout", default=300.0, show_default=True, help="Seconds the version may take to load.")
@json_option
@reports_errors
def rollback_command(model: str, version: int, server: str, admin_key_env: str, timeout: float, as_json: bool) -> None:
    """Serve VERSION of MODEL alone on a running server, with the config it runs now.

    The version loads while the current one keeps answering; once it is ready the others are unloaded.
    The repository is not changed: a restarted server serves what its config.pbtxt names.

    \b
    Example:
      tritonkit rollback classifier --to 3 --server 127.0.0.1:8000
    """
    rollback(server, model, version, admin_key_env=admin_key_env, timeout=timeout)
    if as_json:
        emit_json({"ok": True, "model": model, "version": version, "server": server})
    else:
        click.echo(f"{model}: serving version {version} on {server}")
