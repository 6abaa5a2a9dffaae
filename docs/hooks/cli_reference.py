"""mkdocs hook: the CLI reference page, rendered at build time from the click commands themselves.

The page `reference/cli.md` holds the marker `<!-- cli-help -->`; it becomes every command's `--help` exactly as
the terminal prints it (examples and all), so the reference cannot drift from the code.
"""
from __future__ import annotations

from typing import Any

import click

MARKER = "<!-- cli-help -->"
WIDTH = 98   # what click gives a terminal of 100 columns or more (the group's max_content_width, less 2)


def _sections(command: click.Command, ctx: click.Context, depth: int) -> list[str]:
    """`command`'s help under a heading, then its subcommands' (a group's), one level deeper."""
    out = [f"{'#' * depth} {ctx.command_path}", "", "```text", command.get_help(ctx).rstrip(), "```", ""]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                sub_ctx = sub.context_class(sub, info_name=name, parent=ctx, **sub.context_settings)
                out += _sections(sub, sub_ctx, depth + 1)
    return out


def render() -> str:
    """Markdown: `tritonkit --help`, then one section per command, in the order `tritonkit --help` lists them."""
    from tritonkit.cli.main import cli

    root = cli.context_class(cli, info_name="tritonkit", terminal_width=WIDTH, **cli.context_settings)   # -h, width 100
    return "\n".join(_sections(cli, root, 2))


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return markdown.replace(MARKER, render()) if MARKER in markdown else markdown
