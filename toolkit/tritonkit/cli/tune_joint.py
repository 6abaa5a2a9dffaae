"""`tritonkit tune PIPELINE --joint`: the options of the knob search and how its plan and outcome are printed."""
from pathlib import Path
from typing import Any

import click

from tritonkit.cli.output import options
from tritonkit.errors import TritonkitError
from tritonkit.tune.space.knobs import grid_size, knob_names, knob_rows
from tritonkit.tune.targets.engine import engines


def _knobs_help() -> str:
    """Which settings, naming those an installed engine adds."""
    owned = "; ".join(f"{', '.join(e.knob_names)}: the {e.label} engine's" for e in engines().values())
    return "--joint: which settings to search, comma-separated" + (f" ({owned})." if owned else ".")


#: The options only `--joint` reads (the bound, objective and window options are tune's own), by parameter name.
JOINT_OPTIONS = ("joint", "budget", "repeats", "concurrency", "confirm_rounds", "knobs", "max_ttft_ms", "max_itl_ms",
                 "max_tokens")
joint_options = options(
    click.option("--joint", is_flag=True, help="Search every step of an ensemble or BLS PIPELINE together, "
                 "measured end to end with perf_analyzer (no Model Analyzer; decoupled pipelines streamed)."),
    click.option("--budget", type=int, default=20, show_default=True,
                 help="--joint: at most this many configurations measured."),
    click.option("--repeats", type=int, default=1, show_default=True,
                 help="--joint: perf_analyzer runs per configuration; the median counts (raise on a noisy host)."),
    click.option("--concurrency", type=int, default=4, show_default=True,
                 help="--joint: concurrent requests every configuration is measured at."),
    click.option("--confirm-rounds", type=int, default=2, show_default=True,
                 help="--joint: a winner other than the spec's own settings is measured again against them in this "
                 "many alternating rounds and written only if it still wins (0: the search alone decides)."),
    click.option("--knobs", default=",".join(knob_names()), show_default=True, help=_knobs_help()),
    click.option("--max-ttft-ms", type=float, help="--joint, LLM pipelines: only configurations whose p99 time "
                 "to first token stays at or below this win (objective: tokens/s)."),
    click.option("--max-itl-ms", type=float, help="--joint, LLM pipelines: only configurations whose p99 gap "
                 "between two streamed tokens stays at or below this win."),
    click.option("--max-tokens", type=int, default=32, show_default=True,
                 help="--joint, LLM pipelines: greedy tokens each measuring stream generates."),
)


def _knobs(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in knob_names()]
    if unknown or not names:
        raise TritonkitError("", "--knobs", f"unknown knob '{unknown[0] if unknown else text}'",
                             f"choose from {', '.join(knob_names())}")
    return names


def joint_settings(joint: dict[str, Any]) -> dict[str, Any]:
    """The `--joint` options as TuneOptions fields, checked."""
    for name in ("budget", "repeats", "concurrency", "max_tokens"):
        if joint[name] <= 0:
            option = "--" + name.replace("_", "-")
            raise TritonkitError("", option, f"must be positive, got {joint[name]}", f"pass a positive {option}")
    if joint["confirm_rounds"] < 0:
        raise TritonkitError("", "--confirm-rounds", f"must be 0 or more, got {joint['confirm_rounds']}",
                             "pass 0 to skip the confirmation, or a positive number of rounds")
    return {"joint": True, "knobs": _knobs(joint["knobs"]),
            **{name: joint[name] for name in ("budget", "repeats", "concurrency", "max_tokens", "confirm_rounds")}}


def print_space(plan: Any) -> None:
    """`--dry-run`: the pipeline's knobs and the grid's size; nothing built or measured."""
    target, knobs = plan.target, plan.knobs
    click.echo(f"{target.name} ({target.kind}{', decoupled: streamed' if target.decoupled else ''}): "
               f"{len(knobs)} knobs, {grid_size(knobs)} configurations in all, at most {plan.options.budget} measured")
    for row in knob_rows(knobs):
        click.echo(f"  {row['step']}.{row['knob']}: {row['values']} (now {row['default']})")


def print_joint(done: Any, spec: Path) -> None:
    """The shared table and comparison, the winner's settings, the notes and what was written."""
    from tritonkit.tune.results.report import comparison, table  # start-up: the report's protobuf configs, after a run

    options, summary = done.options, done.summary()
    click.echo(f"\n{done.target.name}: {summary['measured']} of {summary['grid_size']} configurations measured end "
               f"to end ({options.search}, concurrency {options.concurrency}, objective {options.objective})")
    click.echo(table(done.choice, done.results, done.target.as_tune_target()))
    if done.target.streams is not None:
        click.echo(f"(an {done.target.streams.label} pipeline: infer/s are output tokens/s, p99 ms the p99 time to "
                   "first token; every measurement with its p99 inter-token gap is in the progress lines and the "
                   "summary)")
    compared = comparison(done.choice, done.results, options.objective, options.constraints)
    if compared is not None:
        click.echo(compared.line(options.constraints))
    click.echo(f"winner: {done.winner_settings}")
    for note in done.notes:
        click.echo(f"note: {note}")
    if done.tuned:
        click.echo(f"wrote tuned: {', '.join(done.tuned)} to {spec}; rebuilt "
                   f"{done.build.repository if done.build else '-'}")
    click.echo(f"plot: {done.plot}\nsummary: {done.tune_dir.summary}")
