"""`tritonkit tune`: find the best instance count, batch size and batching delay with Triton Model Analyzer."""
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from tritonkit.cli.output import emit_json, json_option, reports_errors, spec_option
from tritonkit.cli.tune_joint import JOINT_OPTIONS, joint_options, joint_settings, print_joint, print_space
from tritonkit.errors import TritonkitError
from tritonkit.tune.options import Constraints, TuneOptions


def _progress(message: str) -> None:
    """Progress goes to stderr, so `--json` output on stdout stays one document."""
    click.echo(message, err=True)


def _print_plan(plan) -> None:
    click.echo(f"# Model Analyzer config: {plan.tune_dir.config}")
    click.echo(plan.tune_dir.config.read_text().rstrip())
    click.echo("\n# Commands tune would run:")
    click.echo(f"{shlex.join(plan.command)}    # cwd {plan.tune_dir.root}")
    click.echo(f"tritonkit build -f {plan.options.spec_path}    # after writing the winner as tuned: "
               f"{', '.join(plan.target.models)}")
    for note in plan.notes:
        click.echo(f"# note: {note}")


def _print_outcome(outcome) -> None:
    from tritonkit.tune.results.report import comparison, table  # start-up: the report's protobuf configs, after a run

    plan, choice = outcome.plan, outcome.choice
    how = "remote server, no search" if plan.options.launch == "remote" else f"{plan.options.mode} search"
    click.echo(f"\n{plan.target.name}: {len(outcome.results.measurements)} measurements of "
               f"{len(choice.ranking)} configurations ({how}, objective {plan.options.objective})")
    click.echo(table(choice, outcome.results, plan.target))
    options = plan.options
    compared = comparison(choice, outcome.results, options.objective, options.constraints)
    if compared is not None:
        click.echo(compared.line(options.constraints))
    elif not choice.winner.is_default and choice.default is not None:
        click.echo("best over default: not compared (no concurrency measured for both; the concurrency sweep, "
                   "on unless --no-sweep, measures the default and the best over the same range)")
    for note in outcome.notes:
        click.echo(f"note: {note}")
    if outcome.tuned:
        if choice.winner.is_default:
            click.echo("the configuration in the spec measured best; tuned: records it with its measurements")
        click.echo(f"wrote tuned: {', '.join(outcome.tuned)} to {plan.options.spec_path}; rebuilt "
                   f"{outcome.build.repository if outcome.build else '-'}")
    paths = outcome.paths()
    width = max(map(len, paths), default=0) + 1
    for name, path in paths.items():
        click.echo(f"{name + ':':<{width}} {path}")


@click.command("tune")
@click.argument("target", metavar="MODEL|PIPELINE")
@spec_option
@click.option("--objective", type=click.Choice(["throughput", "latency"]), default="throughput", show_default=True,
              help="Maximize throughput or minimize p99 latency.")
@click.option("--max-p99-ms", type=float, help="Only configurations whose p99 latency stays at or below this win.")
@click.option("--min-throughput", type=float, help="Only configurations reaching this many infer/s win.")
@click.option("--mode", type=click.Choice(["quick", "brute"]), default="quick", show_default=True,
              help="quick: Model Analyzer's guided search; brute: every combination (trimmed to the budget). "
              "Pipelines always use quick.")
@click.option("--budget-minutes", type=float, default=30.0, show_default=True,
              help="Stop measuring after this long (the checkpoint keeps results; rerun to resume).")
@click.option("--launch", type=click.Choice(["local", "remote", "docker"]), default="local", show_default=True,
              help="local: the embedded Triton; remote: this project's running `tritonkit serve` server (measures "
              "its current configuration only); docker: the Triton container (needs a Docker engine).")
@click.option("--measurement-requests", type=int, default=100, show_default=True,
              help="Requests per perf_analyzer measurement window; raise it when measurements are not stable.")
@click.option("--stability-percentage", type=float, default=25.0, show_default=True,
              help="Allowed throughput spread between windows.")
@click.option("--max-instances", type=int, help="Largest instance count to try [default: from the host].")
@click.option("--max-batch-size", type=int, help="Largest max_batch_size to try [default: 2x the spec's, at least 16].")
@click.option("--no-sweep", is_flag=True, help="Skip Model Analyzer's concurrency sweep of the best configurations.")
@click.option("--dry-run", is_flag=True, help="Print the Model Analyzer config and the commands; measure nothing.")
@joint_options
@json_option
@reports_errors
def tune_command(target: str, spec: Path, max_p99_ms: float | None, min_throughput: float | None, no_sweep: bool,
                 as_json: bool, **given: Any) -> None:
    """Tune MODEL (or an ensemble/BLS PIPELINE) with Triton Model Analyzer and write the winner back.

    Model Analyzer profiles the model on the embedded Triton (ONNX models through the same Python-backend
    fallback `tritonkit serve` uses) over instance counts, max batch sizes and dynamic-batching settings.
    The best configuration by the objective, under the constraints, is written to the spec's `tuned:`
    section with where and how it was measured, and the repository is rebuilt. Work files, Model
    Analyzer's reports and a throughput-vs-p99 plot are in .tritonkit/tune/MODEL/; an interrupted run
    resumes from its checkpoint.

    \b
    Example:
      tritonkit tune text_encoder                             # quick search, best throughput
      tritonkit tune text_encoder --max-p99-ms 50 --budget-minutes 20
      tritonkit tune classify --objective latency --min-throughput 200   # an ensemble pipeline
      tritonkit tune text_encoder --mode brute --dry-run      # print Model Analyzer's config only
      tritonkit tune asr --joint --max-p99-ms 300 --budget 16 # every step of a pipeline together, end to end
    """
    joint = {name: given.pop(name) for name in JOINT_OPTIONS}
    constraints = Constraints(max_p99_ms, min_throughput)
    if joint["joint"]:  # tritonkit's own end-to-end search of a pipeline: no Model Analyzer
        settings = joint_settings(joint)
        constraints = replace(constraints, max_ttft_ms=joint["max_ttft_ms"], max_itl_ms=joint["max_itl_ms"])
    else:
        from tritonkit.tune.analyzer.prepare import check_installed  # start-up: the serving stack

        check_installed()  # before importing the modules that need Model Analyzer's extras
        settings = {}
        for name in ("measurement_requests", "budget_minutes", "max_instances", "max_batch_size"):
            if given[name] is not None and given[name] <= 0:
                option = "--" + name.replace("_", "-")
                raise TritonkitError("", option, f"must be positive, got {given[name]:g}", f"pass a positive {option}")
    from tritonkit.tune.strategies import tune  # start-up: the serving and export stacks, when it runs

    # the other options are TuneOptions' fields by name
    options = TuneOptions(target=target, spec_path=spec.absolute(), constraints=constraints,
                          concurrency_sweep=not no_sweep, **given, **settings)
    result = tune(options, _progress)
    if as_json:
        emit_json(result.summary())
    elif options.dry_run:
        (print_space if options.joint else _print_plan)(result)
    elif options.joint:
        print_joint(result, spec)
    else:
        _print_outcome(result)
