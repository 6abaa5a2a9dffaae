"""How `tritonkit tune` searches: one interface, `Strategy`, and `strategy_for`, which picks one from the options.

- Model Analyzer's own modes (`model_analyzer.py`): quick (its guided walk of instance counts and max batch sizes)
  or brute (every combination, trimmed to the budget), over one model or a pipeline it profiles; it measures with
  perf_analyzer itself.
- tritonkit's walks over a pipeline's knobs (`knob_search.py`, `--joint`), measured end to end: coordinate descent
  (`descent.py`, quick) or the grid (`grid.py`, brute) within a budget (`budget.py`), the winner measured again
  against the spec's own settings (`confirm.py`).

Both choose, report and write back the same way (`results/`).
"""
from collections.abc import Callable
from typing import Any, Protocol

from tritonkit.tune.options import TuneOptions
from tritonkit.tune.strategies import knob_search, model_analyzer

Report = Callable[[str], None]


class Summarized(Protocol):
    """A plan or an outcome: `summary()` is what `--json` prints."""

    def summary(self) -> dict[str, Any]: ...


class Strategy(Protocol):
    """One way to search (a module): `plan` says what it would search (`--dry-run`: nothing measured or written),
    `run` searches, chooses and writes the winner back."""

    def plan(self, options: TuneOptions, report: Report) -> Summarized: ...

    def run(self, options: TuneOptions, report: Report) -> Summarized: ...


def strategy_for(options: TuneOptions) -> Strategy:
    """Model Analyzer's quick or brute search, or with `joint` the walk over a pipeline's knobs."""
    return knob_search if options.joint else model_analyzer


def tune(options: TuneOptions, report: Report) -> Summarized:
    """What `options.dry_run` would search, else the search's outcome, the winner written back."""
    strategy = strategy_for(options)
    return strategy.plan(options, report) if options.dry_run else strategy.run(options, report)
