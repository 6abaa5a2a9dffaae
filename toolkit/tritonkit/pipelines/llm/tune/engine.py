"""The LLM engine as `tune --joint` sees it: which model it is, its knobs, and what the measuring streams need."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tritonkit.pipelines.llm.names import IDS_OUTPUT, KV_CACHE_PARAMETER, TEXT_INPUT
from tritonkit.tune.space.knobs import Knob
from tritonkit.tune.targets.engine import Engine, StreamBench, StreamSample

if TYPE_CHECKING:
    from tritonkit.spec.model import ModelSpec


def is_engine(spec: ModelSpec) -> bool:
    """The engine is the model with a KV-cache budget."""
    return KV_CACHE_PARAMETER in spec.parameters


def knobs(name: str, spec: ModelSpec, delays: tuple[int, ...]) -> list[Knob]:
    """The engine's step settings: generations per step, the oldest strategy's queue delay where Triton schedules
    its steps (sequence batching), the KV budget. Never instances or dynamic batching: the engine steps its
    generations itself, and its KV caches live in its one process."""
    size = spec.max_batch_size
    oldest = spec.sequence_batching.oldest if spec.sequence_batching is not None else None
    found = [Knob(name, "max_batch_size", tuple(sorted({max(1, size // 4), max(1, size // 2), size, 2 * size})), size)]
    if oldest is not None:
        delay = oldest.max_queue_delay_microseconds
        found.append(Knob(name, "queue_delay_us", tuple(sorted({*delays, delay})), delay))
    kv = int(spec.parameters[KV_CACHE_PARAMETER])
    return [*found, Knob(name, "kv_cache_bytes", (kv // 2, kv, 2 * kv), kv, KV_CACHE_PARAMETER)]


def refusal(top: ModelSpec) -> tuple[str, str] | None:
    """The pipeline must take text and stream ids, as the measuring clients send and read."""
    if TEXT_INPUT in {t.name for t in top.input} and IDS_OUTPUT in {t.name for t in top.output}:
        return None
    return (f"has no {TEXT_INPUT} input and {IDS_OUTPUT} output, which the streaming clients measuring it send and "
            "read", "tune the pipeline that takes text, e.g. tritonkit tune llm --joint")


def measure(repository: Path, bench: StreamBench, work_dir: Path, log: Path) -> StreamSample:
    from tritonkit.pipelines.llm.tune.measure import measure_llm  # start-up: numpy, tritonclient and the server

    return measure_llm(repository, bench, work_dir, log)


ENGINE = Engine("LLM", ("max_batch_size", "kv_cache_bytes"), is_engine, knobs, refusal, measure)
