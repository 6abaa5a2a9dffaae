"""The result table (default vs best vs runners-up) and the machine-readable summary of a tuning run."""
from __future__ import annotations

from typing import Any

from tritonkit.tune.mapping import describe, variant_settings
from tritonkit.tune.results import TuneResults
from tritonkit.tune.target import TuneTarget
from tritonkit.tune.winner import Choice, Ranked


def settings_text(results: TuneResults, target: TuneTarget, variant: str) -> str:
    """`2 inst, batch 16, dyn 0us` for a model; `pre: ...; cls: ...` for a pipeline's composing models."""
    configs = variant_settings(results, variant, target)
    if not target.is_pipeline:
        return describe(configs[target.name])
    return "; ".join(f"{name}: {describe(cfg)}" for name, cfg in configs.items() if name != target.name)


def rows(choice: Choice) -> list[tuple[str, Ranked]]:
    """(role, configuration) in table order: default, best, then runners-up other than the default."""
    out: list[tuple[str, Ranked]] = []
    if choice.default is not None and not choice.winner.is_default:
        out.append(("default", choice.default))
    out.append(("best (= default)" if choice.winner.is_default else "best", choice.winner))
    out += [("runner-up", r) for r in choice.runners_up if not r.is_default][:3]
    return out


def table(choice: Choice, results: TuneResults, target: TuneTarget) -> str:
    """A plain-text table; `meets` is whether any measurement of the configuration met the constraints."""
    header = ("role", "configuration", "settings", "conc", "infer/s", "p99 ms", "meets")
    body = [(role, r.variant, settings_text(results, target, r.variant), str(r.best.concurrency),
             f"{r.best.throughput:.1f}", f"{r.best.p99_ms:.1f}", "yes" if r.meets else "no")
            for role, r in rows(choice)]
    widths = [max(len(str(c)) for c in col) for col in zip(header, *body)]
    right = {3, 4, 5}
    lines = []
    for cells in (header, *body):
        lines.append("  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
                     .rstrip())
    return "\n".join(lines)


def gain(choice: Choice) -> float | None:
    """Best over default throughput (each at its best qualifying concurrency)."""
    if choice.default is None or choice.default.best.throughput <= 0:
        return None
    return choice.winner.best.throughput / choice.default.best.throughput


def summary(choice: Choice, results: TuneResults, target: TuneTarget) -> dict[str, Any]:
    def one(r: Ranked) -> dict[str, Any]:
        return {"configuration": r.variant, "settings": settings_text(results, target, r.variant),
                "concurrency": r.best.concurrency, "throughput_infer_per_s": r.best.throughput,
                "p99_latency_ms": r.best.p99_ms, "meets_constraints": r.meets}

    return {"winner": one(choice.winner), "default": one(choice.default) if choice.default else None,
            "runners_up": [one(r) for r in choice.runners_up], "gain_over_default": gain(choice),
            "measurements": len(results.measurements), "configurations": len(choice.ranking)}
