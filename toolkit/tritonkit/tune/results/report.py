"""The result table (default vs best vs runners-up), the like-for-like comparison with the default, and the
machine-readable summary of a tuning run."""
from dataclasses import dataclass
from typing import Any

from tritonkit.tune.options import Constraints, Objective
from tritonkit.tune.results.mapping import describe, variant_settings
from tritonkit.tune.results.measurements import Measurement, TuneResults
from tritonkit.tune.results.winner import Choice, Ranked, describe_limits, meets, sort_key
from tritonkit.tune.targets.model import TuneTarget


def settings_text(results: TuneResults, target: TuneTarget, variant: str) -> str:
    """`2 inst, batch 16, dyn 0us` for a model; `pre: ...; cls: ...` for a pipeline's composing models."""
    configs = variant_settings(results, variant, target)
    if not target.is_pipeline:
        return describe(configs[target.name])
    return "; ".join(f"{name}: {describe(cfg)}" for name, cfg in configs.items() if name != target.name)


def legend_labels(results: TuneResults, target: TuneTarget) -> dict[str, str]:
    """Each configuration's plot label: its short name and its settings (`config_4: 2 inst, batch 16, dyn 0us`)."""
    labels = {}
    for variant in results.by_variant():
        name = variant.removeprefix(results.model + "_").replace("config_default", "default")
        labels[variant] = f"{name}: {settings_text(results, target, variant)}" if variant in results.configs else name
    return labels


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
    return "\n".join("  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
                     .rstrip() for cells in (header, *body))


@dataclass(frozen=True)
class Comparison:
    """The winner and the default measured at the same concurrency, judged against the same constraints."""

    concurrency: int
    winner: Measurement
    default: Measurement
    default_meets: bool

    @property
    def gain(self) -> float | None:
        """Winner over default throughput at this concurrency."""
        return self.winner.throughput / self.default.throughput if self.default.throughput > 0 else None

    def line(self, constraints: Constraints) -> str:
        limits = describe_limits(constraints)
        bound = f" (bound: {limits})" if limits else ""
        gain = f"{self.gain:.2f}x throughput" if self.gain is not None else "the default served nothing"
        verdict = "" if self.default_meets or not limits else "; the default does not meet the bound"
        return (f"best over default at concurrency {self.concurrency}{bound}: {gain} ({self.winner.throughput:.1f} "
                f"vs {self.default.throughput:.1f} infer/s, p99 {self.winner.p99_ms:.1f} vs {self.default.p99_ms:.1f} "
                f"ms{verdict})")

    def as_dict(self) -> dict[str, Any]:
        def one(m: Measurement) -> dict[str, Any]:
            return {"throughput_infer_per_s": m.throughput, "p99_latency_ms": m.p99_ms}
        return {"concurrency": self.concurrency, "winner": one(self.winner), "default": one(self.default),
                "default_meets_constraints": self.default_meets, "gain": self.gain}


def comparison(choice: Choice, results: TuneResults, objective: Objective,
               constraints: Constraints) -> Comparison | None:
    """Winner and default at one concurrency both were measured at: the winner's own point when the default was
    measured there, else the winner's best qualifying point among the shared concurrencies. None when the
    winner is the default or they share no concurrency (each one's best point would sit at a different load)."""
    if choice.default is None or choice.winner.is_default:
        return None
    measured = results.by_variant()
    default_at = {m.concurrency: m for m in measured[choice.default.variant]}
    shared = [m for m in measured[choice.winner.variant] if m.concurrency in default_at]
    if not shared:
        return None
    key, best = sort_key(objective), choice.winner.best.concurrency
    point = min(shared, key=lambda m: (m.concurrency != best, not meets(m, constraints), key(m)))
    default = default_at[point.concurrency]
    return Comparison(point.concurrency, point, default, meets(default, constraints))


def summary(choice: Choice, results: TuneResults, target: TuneTarget, objective: Objective,
            constraints: Constraints) -> dict[str, Any]:
    def one(r: Ranked) -> dict[str, Any]:
        return {"configuration": r.variant, "settings": settings_text(results, target, r.variant),
                "concurrency": r.best.concurrency, "throughput_infer_per_s": r.best.throughput,
                "p99_latency_ms": r.best.p99_ms, "meets_constraints": r.meets,
                **({} if r.best.itl_ms is None else {"tokens_per_s": r.best.throughput, "ttft_p99_ms": r.best.ttft_ms,
                                                     "itl_p99_ms": r.best.itl_ms})}

    compared = comparison(choice, results, objective, constraints)
    return {"winner": one(choice.winner), "default": one(choice.default) if choice.default else None,
            "runners_up": [one(r) for r in choice.runners_up], "comparison": compared.as_dict() if compared else None,
            "gain_over_default": compared.gain if compared else (1.0 if choice.winner.is_default else None),
            "measurements": len(results.measurements), "configurations": len(choice.ranking)}
