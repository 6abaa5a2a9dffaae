"""`tritonkit validate`: protobuf and semantic checks on any model repository, hand-written ones included."""
from __future__ import annotations

from pathlib import Path

import click

from tritonkit.cli.output import emit_json, json_option, reports_errors
from tritonkit.validate.repository_check import validate_repository


@click.command("validate")
@click.argument("directory", default="model_repository", type=click.Path(path_type=Path))
@json_option
@reports_errors
def validate_command(directory: Path, as_json: bool) -> None:
    """Check every config.pbtxt in DIRECTORY the way `tritonkit build` checks its own.

    \b
    Example:
      tritonkit validate model_repository
      tritonkit validate /srv/triton/models --json
    """
    configs = validate_repository(directory)
    if as_json:
        emit_json({"ok": True, "repository": str(directory), "models": sorted(configs)})
        return
    noun = "model" if len(configs) == 1 else "models"
    click.echo(f"{directory}: {len(configs)} {noun} valid ({', '.join(sorted(configs))})")
