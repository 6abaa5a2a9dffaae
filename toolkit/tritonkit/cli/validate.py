"""`tritonkit validate`: protobuf and semantic checks on any model repository, hand-written ones included."""
from pathlib import Path

import click

from tritonkit.cli.output import echo_warnings, emit_json, json_option, reports_errors
from tritonkit.cli.paths import LocalFolder
from tritonkit.validate.repository_check import check_repository


@click.command("validate")
@click.argument("directory", default="model_repository", type=LocalFolder())
@json_option
@reports_errors
def validate_command(directory: Path, as_json: bool) -> None:
    """Check every config.pbtxt in DIRECTORY the way `tritonkit build` checks its own.

    Errors are what Triton 2.51 would refuse to load, the files each config names included: label files,
    model files, and an ONNX graph or TorchScript model compared with its config as the container's
    backends compare them at load. Warnings (stderr, `warning:`) mark rules where tritonkit is stricter
    than Triton and do not fail the command.

    \b
    Example:
      tritonkit validate model_repository
      tritonkit validate /srv/triton/models --json
    """
    checked = check_repository(directory)
    configs = checked.configs
    echo_warnings(checked.warnings)
    if as_json:
        emit_json({"ok": True, "repository": str(directory), "models": sorted(configs),
                   "warnings": [w.__dict__ for w in checked.warnings]})
        return
    noun = "model" if len(configs) == 1 else "models"
    click.echo(f"{directory}: {len(configs)} {noun} valid ({', '.join(sorted(configs))})")
