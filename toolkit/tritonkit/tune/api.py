"""`tune()`: the strategy the options ask for (`strategies/`), planned (`--dry-run`) or run."""
from tritonkit.tune.options import TuneOptions
from tritonkit.tune.strategies import Report, Summarized, strategy_for


def tune(options: TuneOptions, report: Report) -> Summarized:
    """What `options.dry_run` would search, else the search's outcome, the winner written back."""
    strategy = strategy_for(options)
    return strategy.plan(options, report) if options.dry_run else strategy.run(options, report)
