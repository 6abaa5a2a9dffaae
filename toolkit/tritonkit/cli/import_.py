"""`tritonkit import`: an existing Triton model repository -> tritonkit.yaml + models/<name>/ next to it."""
from pathlib import Path

import click

from tritonkit.cli.output import emit_json, json_option, reports_errors
from tritonkit.cli.paths import LocalFolder
from tritonkit.importer.project import import_repository


@click.command("import")
@click.argument("directory", type=LocalFolder())
@click.option("-o", "--output", "spec", default="tritonkit.yaml", show_default=True, type=click.Path(path_type=Path),
              help="Spec file to write; the model files are copied into models/<name>/ next to it.")
@click.option("--partial", is_flag=True,
              help="Import the models the spec can express and list each model left out, one line each "
              "(default: all or nothing).")
@json_option
@reports_errors
def import_command(directory: Path, spec: Path, partial: bool, as_json: bool) -> None:
    """Turn the model repository DIRECTORY into a tritonkit.yaml whose build writes the same configs.

    Every config.pbtxt is parsed into Triton's ModelConfig, converted field by field, rendered back with
    the build's templates and compared: a setting the spec cannot express is an error naming the model
    and field, and nothing is written (with --partial: that model, and any model calling it, is left out
    and listed). Version files, label files, warmup data and initial states are copied.

    \b
    Example:
      tritonkit import /srv/triton/models -o my_project/tritonkit.yaml
      cd my_project && tritonkit build && tritonkit serve --background && tritonkit smoke
    """
    result = import_repository(directory, spec, partial)
    if as_json:
        emit_json({"ok": True, **result.summary()})
        return
    click.echo(f"wrote {result.spec} ({len(result.models)} models: {', '.join(result.models)}) and {len(result.files)} "
               f"model files under {result.spec.parent / 'models'}")
    for name, problems in result.skipped.items():
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        click.echo(f"not imported: model '{name}': {problems[0].line()}{more}")
    for rel in result.leftovers:
        click.echo(f"not imported: {directory / rel} (no spec field carries it; copy it by hand if the model needs it)")
    click.echo(f"next: cd {result.spec.parent} && tritonkit build && tritonkit serve --background && tritonkit smoke")
