"""Entry point of the `tritonkit` command: a click group assembled from one module per command."""
from __future__ import annotations

import click

from tritonkit import TRITON_VERSION, __version__
from tritonkit.cli import build, export, perf, schema, serve, smoke, stop, tune, validate
from tritonkit.cli import import_ as import_cmd
from tritonkit.cli import init_ as init_cmd

COMMANDS = [
    init_cmd.init_command,
    import_cmd.import_command,
    build.build_command,
    export.export_command,
    validate.validate_command,
    schema.schema_command,
    smoke.smoke_command,
    serve.serve_command,
    stop.stop_command,
    perf.perf_command,
    tune.tune_command,
]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="tritonkit", message=f"%(prog)s %(version)s (Triton {TRITON_VERSION})")
def cli() -> None:
    """Turn models into NVIDIA Triton Inference Server deployments from one spec file.

    \b
    Typical flow:
      tritonkit build            # tritonkit.yaml -> model_repository/ + docker-compose.yml
      tritonkit validate         # check any model repository
      docker compose up          # serve it in the official Triton container
    """


for command in COMMANDS:
    cli.add_command(command)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="tritonkit")
