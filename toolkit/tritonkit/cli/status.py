"""`tritonkit status`: the Triton servers `tritonkit serve` runs, with their ports, pid, models and uptime."""
from pathlib import Path

import click

from tritonkit.cli.output import emit_json, json_option, reports_errors
from tritonkit.cli.terminal import echo_report
from tritonkit.serve.listing import RunningServer, machine_servers, project_server


def uptime(seconds: float) -> str:
    """`45s`, `12m05s`, `3h07m`, `2d04h`: the two largest units."""
    s = int(seconds)
    for unit, size, sub, sub_size in (("d", 86400, "h", 3600), ("h", 3600, "m", 60), ("m", 60, "s", 1)):
        if s >= size:
            return f"{s // size}{unit}{(s % size) // sub_size:02d}{sub}"
    return f"{s}s"


def models_text(server: RunningServer) -> str:
    """Model names, a version or state only where it matters: `classify, broken (UNAVAILABLE: not ready)`."""
    if server.models is None:
        return "? (the repository index did not answer)"
    if not server.models:
        return "(none)"
    return ", ".join(m.name if m.ready else f"{m.name} ({m.state or 'not loaded'}: not ready)" for m in server.models)


def table(servers: list[RunningServer], with_project: bool) -> str:
    rows = [(*(("project",) if with_project else ()), "pid", "http", "grpc", "metrics", "uptime", "models")]
    for server in servers:
        s = server.state
        rows.append((*((str(server.project),) if with_project else ()), str(s.pid), f"{s.host}:{s.http_port}",
                     str(s.grpc_port), str(s.metrics_port), uptime(server.uptime_s), models_text(server)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join("  ".join([*(c.ljust(w) for c, w in zip(row, widths)), row[-1]]) for row in rows)


@click.command("status")
@click.option("--all", "every", is_flag=True, help="Every server any project's `tritonkit serve` runs on this machine.")
@json_option
@reports_errors
def status_command(every: bool, as_json: bool) -> None:
    """List the Triton servers `tritonkit serve` runs: this project's, or with --all every one on the machine.

    Each with its pid, HTTP address, gRPC and metrics ports, uptime and models (from the server's
    repository index; a model that is not ready is marked). A server is found through the state file
    its project's `tritonkit serve` wrote (.tritonkit/server.json); a stale one is removed.

    \b
    Examples:
      tritonkit serve --background && tritonkit status
      tritonkit status --all --json
    """
    project = Path.cwd()
    if every:
        servers = machine_servers()
    else:
        found = project_server(project)
        servers = [found] if found is not None else []
    if as_json:
        emit_json({"ok": True, "servers": [s.as_dict() for s in servers]})
    elif not servers:
        click.echo("no tritonkit server running " + ("on this machine" if every else f"for this project ({project}); "
                   "start one with: tritonkit serve --background"))
    else:
        echo_report(table(servers, with_project=every))
