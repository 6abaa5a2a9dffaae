"""The echo engine for `tune --joint`: the model with an `echo_slots` parameter; more slots stream faster, up to 8,
and the first token comes later with each one. Measured from the candidate's config, so no server is needed."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tritonkit.triton.layout import read_configs
from tritonkit.triton.model_config import int_parameter
from tritonkit.tune.space.knobs import Knob
from tritonkit.tune.targets.engine import Engine, StreamBench, StreamSample

if TYPE_CHECKING:
    from tritonkit.spec.model import ModelSpec

SLOTS = "echo_slots"


def is_engine(spec: ModelSpec) -> bool:
    return SLOTS in spec.parameters


def knobs(name: str, spec: ModelSpec, delays: tuple[int, ...]) -> list[Knob]:
    slots = int(spec.parameters[SLOTS])
    return [Knob(name, SLOTS, (slots // 2, slots, 2 * slots), slots, SLOTS)]


def refusal(top: ModelSpec) -> tuple[str, str] | None:
    if "TEXT" in {t.name for t in top.input}:
        return None
    return "has no TEXT input, which the measuring streams send", "tune the pipeline that takes TEXT"


def measure(repository: Path, bench: StreamBench, work_dir: Path, log: Path) -> StreamSample:
    """tokens/s of `bench.concurrency` streams grows with the slots up to 8; TTFT grows with each slot."""
    slots = max(int_parameter(config, SLOTS) for config in read_configs(repository))
    tokens_per_s = 10.0 * bench.concurrency * min(slots, 8)
    return StreamSample(tokens_per_s, 50.0 * slots, 5.0, ({"tok_s": tokens_per_s},))


ENGINE = Engine("echo", (SLOTS,), is_engine, knobs, refusal, measure)
