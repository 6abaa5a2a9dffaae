"""`tritonkit init`: a working starter project (spec, model code, smoke known answers) in a folder."""
from pathlib import Path

import click

from tritonkit.cli.output import emit_json, json_option, reports_errors
from tritonkit.plugin import host
from tritonkit.starters.project import init_project, next_steps, starters


@click.command("init")
@click.argument("directory", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("--pipeline", type=click.Choice(sorted(starters())), default="classifier", show_default=True,
              help="Which starter: " + "; ".join(f"{name}: {host.installed()[name].description}"
                                                 for name in sorted(starters())))
@click.option("--force", is_flag=True, help="Overwrite files of the starter that already exist.")
@click.option("--model", type=click.Path(exists=True, path_type=Path),
              help="A model of your own for the starter to serve instead of its own (llm: a Hugging Face folder or "
                   "a GGUF file of a Llama, Qwen2, Mistral, Phi-3 or Gemma model).")
@json_option
@reports_errors
def init_command(directory: Path, pipeline: str, force: bool, model: Path | None, as_json: bool) -> None:
    """Write a starter project into DIRECTORY that builds, serves and passes smoke as written.

    Existing files are never overwritten without --force. A starter whose build needs an extra (the llm
    starter: `tritonkit[export,llm]`) or a Debian package is written all the same, with what to install.

    \b
    Example:
      tritonkit init my_project --pipeline classifier
      cd my_project && tritonkit build && tritonkit serve --background && tritonkit smoke
      tritonkit init my_llm --pipeline llm --model ./my-hf-model
    """
    result = init_project(directory, pipeline, force=force, model=model)
    if as_json:
        emit_json({"ok": True, **result.summary()})
        return
    click.echo(f"wrote the {pipeline} starter into {directory}:")
    for path in result.written:
        click.echo(f"  {path.relative_to(directory).as_posix()}")
    if result.missing:
        click.echo(f"missing for the build: {', '.join(result.missing)}")
    if result.missing_system:
        click.echo(f"missing system packages (Debian/Ubuntu): {', '.join(result.missing_system)}")
    if result.note:
        click.echo(f"note: {result.note}")
    click.echo("next:")
    for step in next_steps(result):
        click.echo(f"  {step}")
