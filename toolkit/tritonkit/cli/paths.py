"""Folder options of the commands that read a built repository: an s3:// URL given to one is named as such.

pathlib folds `s3://bucket/prefix` into `s3:/bucket/prefix`, so without this the command reported a mangled
folder that does not exist (`serve`, `publish` DEST, `rollout` and `gateway --repository` are the ones that take s3://).
"""
from pathlib import Path
from typing import Any

import click


class LocalFolder(click.Path):
    """A click.Path (as `Path`) that refuses an s3:// URL with a usage error naming it."""

    def __init__(self) -> None:
        super().__init__(path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.startswith("s3://"):
            self.fail(f"{value!r} is an s3:// URL, not a local folder: pass the built folder it was published from",
                      param, ctx)
        return super().convert(value, param, ctx)
