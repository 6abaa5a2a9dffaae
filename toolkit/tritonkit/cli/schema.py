"""`tritonkit schema`: the JSON Schema of tritonkit.yaml, for editors and CI linters."""
import json

import click

from tritonkit.spec.schema import spec_schema


@click.command("schema")
def schema_command() -> None:
    """Print the JSON Schema of tritonkit.yaml.

    \b
    Example (VS Code YAML extension):
      tritonkit schema > .tritonkit.schema.json
      # then in tritonkit.yaml:  # yaml-language-server: $schema=.tritonkit.schema.json
    """
    click.echo(json.dumps(spec_schema().project_file.model_json_schema(), indent=2))
