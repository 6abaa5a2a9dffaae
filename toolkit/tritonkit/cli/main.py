"""Entry point of the `tritonkit` command: a click group whose commands are imported only when used.

Each command lives in its own module, and some of them import export or serving stacks that take most
of a second; `tritonkit --help`, `--version` and `validate` must not pay for them.
"""
import contextlib
import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import click

from tritonkit import TRITON_VERSION, __version__
from tritonkit.plugin import host

_AS_JSON = "tritonkit.as_json"
#: The pipelines every command runs with (unless TRITONKIT_PIPELINES names another registry), imported when first used.
REGISTRY = "tritonkit.pipelines.registry:PIPELINES"


@dataclass(frozen=True)
class LazyCommand:
    """Where a command lives (`module:attribute` in tritonkit.cli) and the short help `tritonkit --help` lists."""

    target: str
    short_help: str

    def load(self) -> click.Command:
        host.install_default(REGISTRY)
        module, _, attribute = self.target.partition(":")
        command = getattr(importlib.import_module(f"tritonkit.cli.{module}"), attribute)
        assert isinstance(command, click.Command), self.target
        return command


#: Each command's short help: the first line of its docstring, kept here so that listing the commands imports
#: none of them (tests/cli/test_cli_imports.py keeps the two equal). Command NAME is `NAME_command` in
#: tritonkit.cli.NAME, or in the module _MODULES names.
SHORT_HELP = {
    "init": "Write a starter project into DIRECTORY that builds, serves and passes smoke as written.",
    "import": "Turn the model repository DIRECTORY into a tritonkit.yaml whose build writes the same configs.",
    "build": "Render, validate and write the model repository and docker-compose.yml.",
    "export": "Export MODEL (its `source:`) to ONNX/TensorRT and verify it numerically against PyTorch.",
    "validate": "Check every config.pbtxt in DIRECTORY the way `tritonkit build` checks its own.",
    "schema": "Print the JSON Schema of tritonkit.yaml.",
    "smoke": "Prove every model of REPOSITORY answers correctly on a running server.",
    "serve": "Serve the model repository DIRECTORY (a folder, or one published to s3://) with an embedded Triton 2.51.",
    "gateway": "Serve OpenAI-compatible /v1 routes (chat, completions, speech, transcriptions) in front of Triton.",
    "up": "Start the generated docker-compose.yml in the background and wait until its healthcheck passes.",
    "down": "Stop and remove what `tritonkit up` started: containers, the project's network and volumes.",
    "stop": "Stop the Triton server recorded in ./.tritonkit/server.json (background or foreground).",
    "status": "List the Triton servers `tritonkit serve` runs: this project's, or with --all every one on the machine.",
    "perf": "Run perf_analyzer (tritonclient 2.51) against MODEL and print throughput and latency per concurrency.",
    "deploy": "Write Kubernetes or KServe manifests that serve the published repository, sized from the spec.",
    "tune": "Tune MODEL (or an ensemble/BLS PIPELINE) with Triton Model Analyzer and write the winner back.",
    "publish": "Publish the built repository to DEST (a folder or s3://bucket/prefix) as new model versions.",
    "rollout": "Load the versions published to DEST on running servers, check them, then retire the old ones.",
    "rollback": "Serve VERSION of MODEL alone on a running server, with the config it runs now.",
}
_MODULES = {"init": "init_", "import": "import_", "down": "up", "rollback": "rollout"}
COMMANDS = {name: LazyCommand(f"{_MODULES.get(name, name)}:{name}_command", text) for name, text in SHORT_HELP.items()}


class LazyGroup(click.Group):
    """A group of the COMMANDS that imports a command's module only when that command runs or shows its own help."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        return entry.load() if entry is not None else None

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Notes whether --json was asked for (before any `--`), so a usage error can answer in JSON too."""
        ctx.meta[_AS_JSON] = "--json" in (args[:args.index("--")] if "--" in args else args)
        with self._one_line_usage_errors(ctx):
            return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        with self._one_line_usage_errors(ctx):
            return super().invoke(ctx)

    @contextlib.contextmanager
    def _one_line_usage_errors(self, ctx: click.Context) -> Iterator[None]:
        """Click's usage errors, here and in every subcommand, become one `file: field: problem; fix` line."""
        try:
            yield
        except click.UsageError as exc:
            from tritonkit.cli.output import OneLineUsageError, usage_problem  # only on failure: keeps --help fast

            # A group run bare shows its help (NoArgsIsHelpError, click 8.2+; 8.1 exits instead).
            if isinstance(exc, OneLineUsageError) or type(exc).__name__ == "NoArgsIsHelpError":
                raise
            raise OneLineUsageError(usage_problem(exc), ctx.meta.get(_AS_JSON, False)) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The `Commands:` section as click writes it, from the stored short help: nothing is imported."""
        limit = formatter.width - 6 - max(map(len, COMMANDS))
        # A help-only stand-in shortens the text exactly as click shortens the real command's docstring.
        rows = [(name, click.Command(name, help=COMMANDS[name].short_help).get_short_help_str(limit))
                for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="tritonkit", message=f"%(prog)s %(version)s (Triton {TRITON_VERSION})")
def cli() -> None:
    """Turn models into NVIDIA Triton Inference Server deployments from one spec file.

    \b
    Typical flow:
      tritonkit init my_project      # a starter project: tritonkit.yaml and its models
      tritonkit build                # tritonkit.yaml -> model_repository/ + docker-compose.yml
      tritonkit serve --background   # the repository on an embedded Triton
      tritonkit smoke                # every model answers as its config and samples say
      tritonkit tune MODEL           # Model Analyzer's best settings, written back as tuned:
      tritonkit publish s3://BUCKET/PREFIX                   # new model versions in S3
      tritonkit deploy k8s --repository s3://BUCKET/PREFIX   # Kubernetes manifests
    """


def main() -> None:
    cli(prog_name="tritonkit")
