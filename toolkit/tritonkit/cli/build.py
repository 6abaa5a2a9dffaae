"""`tritonkit build`: spec -> validated model repository + docker-compose.yml."""
from pathlib import Path

import click

from tritonkit.cli.output import echo_warnings, emit_json, json_option, reports_errors, spec_option
from tritonkit.cli.terminal import ExportDisplay, StatusLine
from tritonkit.repository.build import build


@click.command("build")
@spec_option
@click.option("-o", "--output", "output", type=click.Path(path_type=Path), help="Repository folder [default: "
              "model_repository next to the spec].")
@click.option("--compose", "compose", type=click.Path(path_type=Path), help="Compose file [default: "
              "docker-compose.yml next to the spec].")
@click.option("--dry-run", is_flag=True, help="Check the spec and print the file tree that would be written; write "
              "nothing and run no export.")
@json_option
@reports_errors
def build_command(spec: Path, output: Path | None, compose: Path | None, dry_run: bool, as_json: bool) -> None:
    """Render, validate and write the model repository and docker-compose.yml.

    Nothing is written unless every config parses into Triton's ModelConfig and passes the checks;
    the repository is built in a temporary folder and swapped in whole.

    \b
    Example:
      tritonkit build -f tritonkit.yaml -o model_repository
      tritonkit build --dry-run --json
    """
    with StatusLine(every=True) as line:
        display = ExportDisplay(line)
        result = build(spec, output, compose, dry_run=dry_run, progress=display)
        display.done()
    echo_warnings(result.plan.warnings)
    if as_json:
        emit_json({"ok": True, **result.summary()})
        return
    verb = "would write" if dry_run else "wrote"
    click.echo(f"{verb} {result.repository} ({len(result.plan.models) + len(result.plan.pending)} models)")
    if dry_run:
        for path in result.plan.files():
            click.echo(f"  {path}")
        for name in result.plan.pending:
            click.echo(f"would export {name} (not run now); {name}/config.pbtxt and its model files are "
                       "derived at export time")
    for made in (m for models in result.made.values() for m in models.values() if m.line):
        click.echo(made.line)
    for name, copied in result.model_files.items():
        click.echo(f"{name}: {'would copy' if dry_run else 'copied'} "
                   f"{', '.join(f'{dest} ({ref})' for dest, ref in sorted(copied.items()))}")
    click.echo(f"{verb} {result.compose}")
    if result.dockerfile:
        click.echo(f"{verb} {result.dockerfile}")
