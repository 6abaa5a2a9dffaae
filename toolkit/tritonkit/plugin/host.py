"""The pipelines this process runs with: the registry an entry point installed, read by the core.

A registry is a mapping of name -> `Pipeline` at `module:attribute` (the shipped one is
`tritonkit.pipelines.registry:PIPELINES`); it sits above the core and the pipelines, so only an entry point names it:
the CLI before a command runs, a test for the pipelines it brings. It is kept in the environment, so a child
process (the export child) runs with the same pipelines, and imported on first use, so a command that needs no
pipeline (`--help`, `validate`) loads none.
"""
from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tritonkit.plugin.contract import Pipeline, QuantizeCheck

#: Where the installed registry is named, `module:attribute`; set it to run tritonkit with a registry of your own.
SOURCE_ENV = "TRITONKIT_PIPELINES"


def install_default(source: str) -> None:
    """Runs this process, and the children it starts from now on, with the registry at `source`, unless the
    environment already names one."""
    os.environ.setdefault(SOURCE_ENV, source)


def source() -> str:
    """The installed registry's `module:attribute`."""
    named = os.environ.get(SOURCE_ENV)
    if not named:
        raise RuntimeError(f"no pipelines are installed: an entry point calls install_default() with a registry's "
                           f"'module:attribute' first (or set {SOURCE_ENV})")
    return named


def installed() -> Mapping[str, Pipeline[Any]]:
    """The installed pipelines by name, in the registry's order."""
    return _registry(source())


@functools.cache
def _registry(named: str) -> Mapping[str, Pipeline[Any]]:
    module, _, attribute = named.partition(":")
    registry = getattr(importlib.import_module(module), attribute)
    assert isinstance(registry, Mapping), f"{named} is not a mapping of name -> Pipeline"
    return registry


def by_name() -> list[Pipeline[Any]]:
    """The installed pipelines in name order: how the schema lists their sections and the build runs their steps."""
    return [pipeline for _, pipeline in sorted(installed().items())]


def quantize_checks() -> list[QuantizeCheck[Any]]:
    """The installed pipelines' sections of a quantized export, in name order."""
    return [p.quantize for p in by_name() if p.quantize is not None]
