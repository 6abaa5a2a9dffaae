"""A PNG of throughput against p99 latency, one line per configuration over its concurrencies, winner marked.

Saved next to Model Analyzer's own reports; matplotlib runs headless (Agg) so it works on servers and CI.
"""
from pathlib import Path
from typing import Any

from tritonkit.tune.options import Constraints
from tritonkit.tune.results.measurements import TuneResults
from tritonkit.tune.results.winner import Choice


def save_plot(results: TuneResults, choice: Choice, constraints: Constraints, path: Path, title: str,
              labels: dict[str, str] | None = None) -> Path:
    """`labels`: each configuration's legend entry (its settings, report.legend_labels); else its short name."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    for variant, measurements in sorted(results.by_variant().items()):
        points = sorted(measurements, key=lambda m: m.concurrency)
        winner = variant == choice.winner.variant
        style: dict[str, Any] = {"linewidth": 2.5, "zorder": 3} if winner else {"linewidth": 1, "alpha": 0.7}
        if variant.endswith("_config_default"):
            style = {**style, "linestyle": "--"}
        ax.plot([m.p99_ms for m in points], [m.throughput for m in points], marker="o", markersize=3,
                label=(labels or {}).get(variant, variant.removeprefix(results.model + "_")), **style)
    best = choice.winner.best
    ax.scatter([best.p99_ms], [best.throughput], s=180, marker="*", color="gold", edgecolor="black", zorder=5,
               label=f"winner (c={best.concurrency})")
    if constraints.max_p99_ms is not None:
        ax.axvline(constraints.max_p99_ms, color="red", linestyle=":", label="max p99")
    if constraints.min_throughput is not None:
        ax.axhline(constraints.min_throughput, color="red", linestyle="-.", label="min throughput")
    ax.set_xlabel("p99 latency (ms)")
    ax.set_ylabel("throughput (infer/s)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=6, loc="best")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
