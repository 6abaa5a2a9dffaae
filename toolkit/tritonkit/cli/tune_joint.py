"""`tritonkit tune PIPELINE --joint`: the options of the joint end-to-end search and how its outcome is printed."""
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from tritonkit.cli.output import emit_json, options
from tritonkit.errors import TritonkitError
from tritonkit.tune.options import Constraints

KNOB_CHOICES = ("instances", "queue_delay_us", "preferred", "threads", "max_batch_size", "kv_cache_bytes")


#: The options only `--joint` reads (the bound, objective and window options are tune's own).
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
    click.option("--knobs", default=",".join(KNOB_CHOICES), show_default=True,
                 help="--joint: which settings to search, comma-separated (max_batch_size, kv_cache_bytes: "
                 "the LLM engine's)."),
    click.option("--max-ttft-ms", type=float, help="--joint, LLM pipelines: only configurations whose p99 time "
                 "to first token stays at or below this win (objective: tokens/s)."),
    click.option("--max-itl-ms", type=float, help="--joint, LLM pipelines: only configurations whose p99 gap "
                 "between two streamed tokens stays at or below this win."),
    click.option("--max-tokens", type=int, default=32, show_default=True,
                 help="--joint, LLM pipelines: greedy tokens each measuring stream generates."),
)


def _knobs(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in KNOB_CHOICES]
    if unknown or not names:
        raise TritonkitError("", "--knobs", f"unknown knob '{unknown[0] if unknown else text}'",
                             f"choose from {', '.join(KNOB_CHOICES)}")
    return names


def _print_space(options: Any, as_json: bool) -> None:
    """`--dry-run`: the pipeline's knobs and the grid's size; nothing built or measured."""
    from tritonkit.tune.joint_api import plan_space
    from tritonkit.tune.joint_space import grid_size

    _, target, knobs = plan_space(options)
    rows = [{"step": k.step, "knob": k.name, "values": list(k.values), "default": k.default} for k in knobs]
    if as_json:
        emit_json({"ok": True, "dry_run": True, "target": target.name, "models": list(target.models),
                   "knobs": rows, "grid_size": grid_size(knobs), "budget": options.budget})
        return
    click.echo(f"{target.name} ({target.kind}{', decoupled: streamed' if target.decoupled else ''}): "
               f"{len(knobs)} knobs, {grid_size(knobs)} configurations in all, at most {options.budget} measured")
    for row in rows:
        click.echo(f"  {row['step']}.{row['knob']}: {row['values']} (now {row['default']})")


def run_joint(target: str, spec: Path, objective: str, constraints: Constraints, mode: str, requests: int,
              stability: float, max_instances: int | None, joint: dict[str, Any], as_json: bool,
              report: Callable[[str], None], dry_run: bool = False) -> None:
    """Runs the joint search (`--mode brute`: the whole grid) and prints the shared table and comparison."""
    from tritonkit.tune.joint_api import JointOptions, tune_pipeline
    from tritonkit.tune.report import comparison, table

    for name in ("budget", "repeats", "concurrency", "max_tokens"):
        if joint[name] <= 0:
            option = "--" + name.replace("_", "-")
            raise TritonkitError("", option, f"must be positive, got {joint[name]}", f"pass a positive {option}")
    if joint["confirm_rounds"] < 0:
        raise TritonkitError("", "--confirm-rounds", f"must be 0 or more, got {joint['confirm_rounds']}",
                             "pass 0 to skip the confirmation, or a positive number of rounds")
    constraints = replace(constraints, max_ttft_ms=joint["max_ttft_ms"], max_itl_ms=joint["max_itl_ms"])
    options = JointOptions(target, spec.absolute(), objective, constraints,  # type: ignore[arg-type]
                           "grid" if mode == "brute" else "descent", joint["budget"], joint["repeats"],
                           joint["concurrency"], requests, stability, max_instances, _knobs(joint["knobs"]),
                           max_tokens=joint["max_tokens"], confirm_rounds=joint["confirm_rounds"])
    if dry_run:
        return _print_space(options, as_json)
    done = tune_pipeline(options, report)
    summary = done.summary()
    if as_json:
        emit_json(summary)
        return
    click.echo(f"\n{done.target.name}: {summary['measured']} of {summary['grid_size']} configurations measured end "
               f"to end ({options.search}, concurrency {options.concurrency}, objective {objective})")
    click.echo(table(done.choice, done.results, done.target.as_tune_target()))
    if done.target.engine is not None:
        click.echo("(an LLM pipeline: infer/s are output tokens/s, p99 ms the p99 time to first token; every "
                   "measurement with its p99 inter-token gap is in the progress lines and the summary)")
    compared = comparison(done.choice, done.results, options.objective, constraints)
    if compared is not None:
        click.echo(compared.line(constraints))
    click.echo(f"winner: {done.winner_settings}")
    for note in done.notes:
        click.echo(f"note: {note}")
    if done.tuned:
        click.echo(f"wrote tuned: {', '.join(done.tuned)} to {spec}; rebuilt "
                   f"{done.build.repository if done.build else '-'}")
    click.echo(f"plot: {done.plot}\nsummary: {done.tune_dir.summary}")
