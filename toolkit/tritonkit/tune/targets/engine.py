"""An engine: a model that steps its generations itself and streams them, declared by its pipeline's plugin.

In a pipeline that runs one, `tune --joint` searches only the engine's own knobs (its steps set the pipeline's pace)
and measures each candidate with the plugin's streaming clients: output tokens per second under p99 bounds on the
time to first token and on the gap between two tokens (`--max-ttft-ms`, `--max-itl-ms`, like `--max-p99-ms`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tritonkit.plugin import host

if TYPE_CHECKING:
    from tritonkit.spec.model import ModelSpec
    from tritonkit.tune.space.knobs import Knob


@dataclass(frozen=True)
class StreamBench:
    """How every candidate is measured: the pipeline streamed from, streams sent at once, tokens each, repeats."""

    model: str
    concurrency: int = 4
    repeats: int = 1
    max_tokens: int = 32


@dataclass(frozen=True)
class StreamSample:
    """Medians over the repeats (tokens/s, p99 time to first token, p99 inter-token gap) and each repeat's summary."""

    tokens_per_s: float
    ttft_p99_ms: float
    itl_p99_ms: float
    repeats: tuple[dict[str, float], ...]


@dataclass(frozen=True)
class Engine:
    """What a plugin tells `tune` about its engine."""

    label: str   # how reports name it ("an LLM pipeline")
    knob_names: tuple[str, ...]   # its knobs beyond the core's, offered by `--knobs`
    is_engine: Callable[[ModelSpec], bool]
    #: its knobs (model name, spec, queue delays to try): values around the spec's own; never instances or dynamic
    #: batching, since it steps its generations itself
    knobs: Callable[[str, ModelSpec, tuple[int, ...]], list[Knob]]
    #: (what the pipeline's top model lacks, the fix) when the streaming clients cannot drive it, else None
    refusal: Callable[[ModelSpec], tuple[str, str] | None]
    #: serves a candidate repository and streams into `bench.model` (repository, bench, work folder, server log)
    measure: Callable[[Path, StreamBench, Path, Path], StreamSample]


def engines() -> dict[str, Engine]:
    """The installed pipelines' engines, by pipeline name."""
    return {name: p.tuning for name, p in host.installed().items() if p.tuning is not None}


def engine_of(spec: ModelSpec) -> tuple[str, Engine] | None:
    """(pipeline, engine) when the model is an installed pipeline's engine."""
    return next(((name, e) for name, e in engines().items() if e.is_engine(spec)), None)
