"""`tune()`: prepare, run Model Analyzer, choose the winner, write it back to the spec, rebuild, report."""
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf import text_format

from tritonkit.errors import TritonkitError
from tritonkit.files import write_text_atomically
from tritonkit.repository.build import BuildResult, build
from tritonkit.spec.loader import shown_path
from tritonkit.spec.tuned import TunedModel
from tritonkit.triton.model_config import pb as mc
from tritonkit.tune import report as report_mod
from tritonkit.tune.failures import explain
from tritonkit.tune.mapping import tuned_entries
from tritonkit.tune.options import TuneOptions
from tritonkit.tune.plot import save_plot
from tritonkit.tune.prepare import TunePlan, prepare
from tritonkit.tune.provenance import provenance
from tritonkit.tune.results import TuneResults, read_results
from tritonkit.tune.resume import prepare_resume, resume_key
from tritonkit.tune.runner import RunOutcome, format_elapsed, run_analyzer
from tritonkit.tune.winner import Choice, choose
from tritonkit.tune.writeback import write_tuned

Report = Callable[[str], None]


@dataclass
class TuneOutcome:
    """What a tuning run found and wrote."""

    plan: TunePlan
    run: RunOutcome
    results: TuneResults
    choice: Choice
    tuned: dict[str, TunedModel]
    plot: Path
    build: BuildResult | None
    notes: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {
            "ok": True, "target": self.plan.target.name, "kind": self.plan.target.kind,
            "mode": self.plan.options.mode, "objective": self.plan.options.objective,
            "constraints": self.plan.options.constraints.as_dict(), "complete": self.run.complete,
            "elapsed_s": round(self.run.elapsed_s, 1), "tune_dir": str(self.plan.tune_dir.root),
            "model_analyzer_config": str(self.plan.tune_dir.config), "plot": str(self.plot),
            "reports": str(self.plan.tune_dir.reports),
            "outputs": {name: str(path) for name, path in self.paths().items()},
            **report_mod.summary(self.choice, self.results, self.plan.target, self.plan.options.objective,
                                 self.plan.options.constraints),
            "tuned": {name: t.model_dump(mode="json", exclude_none=True) for name, t in self.tuned.items()},
            "spec": str(self.plan.options.spec_path), "repository": str(self.build.repository) if self.build else None,
            "notes": self.notes,
        }

    def paths(self) -> dict[str, Path]:
        """The outputs to open that exist: plot, Model Analyzer's HTML summary, reports, results CSV, summary."""
        return report_mod.report_paths(self.plan.tune_dir, self.plot, self.plan.target.name)


def _check_rebuilt(repository: Path, tuned: dict[str, TunedModel]) -> None:
    """The rebuilt configs must carry the tuned values (guards the spec loader applying the overlay)."""
    for name, entry in tuned.items():
        path = repository / name / "config.pbtxt"
        config = text_format.Parse(path.read_text(), mc.ModelConfig())
        wrong = []
        if entry.max_batch_size is not None and config.max_batch_size != entry.max_batch_size:
            wrong.append(f"max_batch_size {config.max_batch_size} != {entry.max_batch_size}")
        if entry.instance_group is not None:
            counts = [g.count for g in config.instance_group]
            if counts != [g.count for g in entry.instance_group]:
                wrong.append(f"instance counts {counts} != {[g.count for g in entry.instance_group]}")
        delay = config.dynamic_batching.max_queue_delay_microseconds
        if entry.dynamic_batching is not None and delay != entry.dynamic_batching.max_queue_delay_microseconds:
            wrong.append(f"queue delay {delay} != {entry.dynamic_batching.max_queue_delay_microseconds}")
        oldest = entry.sequence_batching.oldest if entry.sequence_batching is not None else None
        if oldest is not None and config.sequence_batching.oldest.max_queue_delay_microseconds != \
                oldest.max_queue_delay_microseconds:
            wrong.append(f"sequence queue delay {config.sequence_batching.oldest.max_queue_delay_microseconds} != "
                         f"{oldest.max_queue_delay_microseconds}")
        for key, value in (entry.parameters or {}).items():
            if config.parameters[key].string_value != str(value):
                wrong.append(f"parameter {key} '{config.parameters[key].string_value}' != '{value}'")
        if wrong:
            raise TritonkitError(str(path), f"tuned.{name}", "the rebuilt config does not carry the tuned values (" +
                                 ", ".join(wrong) + ")", "the spec loader must apply `tuned:`, report this as a bug")


def write_back_spec(spec_path: Path, tuned: dict[str, TunedModel]) -> BuildResult:
    """Writes `tuned:` into the spec and rebuilds; a rebuild that fails restores the spec as it was."""
    old = write_tuned(spec_path, tuned, shown_path(spec_path))
    try:
        result = build(spec_path)
        _check_rebuilt(result.repository, tuned)
    except BaseException:
        write_text_atomically(spec_path, old)
        raise
    return result


def run_plan(plan: TunePlan, report: Report) -> TuneOutcome:
    """Runs a prepared plan to the end: measure (or resume), choose, write back, rebuild, plot."""
    options, tune_dir = plan.options, plan.tune_dir
    if prepare_resume(tune_dir, resume_key(plan.config, tune_dir.built)):
        report(f"resuming: measurements in {tune_dir.checkpoints} are reused (delete {tune_dir.root} to start over)")
    outcome = run_analyzer(tune_dir.config, tune_dir, options.budget_minutes * 60.0, report)
    results = read_results(tune_dir.root, tune_dir.checkpoints, plan.target.name)
    if outcome.interrupted:
        raise TritonkitError(str(tune_dir.checkpoints), "", f"interrupted after {len(results.measurements)} "
                             "measurements (saved in the checkpoint), the spec is unchanged",
                             "run the same command to resume")
    if not results.measurements:
        raise explain(outcome, tune_dir, options.measurement_requests, options.stability_percentage)
    notes = list(plan.notes) + outcome.tracker.notes
    if not outcome.complete:
        notes.append(f"Model Analyzer did not finish ({'budget spent' if outcome.budget_hit else 'stopped'} after "
                     f"{format_elapsed(outcome.elapsed_s)}); choosing among the {len(results.measurements)} "
                     "measurements made (run again to resume)")
    choice = choose(results, options.objective, options.constraints, str(tune_dir.analyzer_log))
    labels = report_mod.legend_labels(results, plan.target)
    if report_mod.drop_gpu_plots(tune_dir):
        notes.append("no GPU on this host: Model Analyzer's GPU plots (all zeros here) were left out")
    if options.launch == "remote":
        notes.append("remote launch measures the running server's configuration only; the spec is unchanged")
        title = f"{plan.target.name}: remote server"
        plot = save_plot(results, choice, options.constraints, tune_dir.plot, title, labels)
        done = TuneOutcome(plan, outcome, results, choice, {}, plot, None, notes)
        tune_dir.summary.write_text(json.dumps(done.summary(), indent=2, default=str))
        return done
    tuned = tuned_entries(results, choice.winner.variant, plan.target, plan.specs,
                          provenance(options, choice.winner.best))
    title = f"{plan.target.name}: throughput vs p99 ({options.mode} search, objective {options.objective})"
    plot = save_plot(results, choice, options.constraints, tune_dir.plot, title, labels)
    report(f"[tune {format_elapsed(outcome.elapsed_s)}] writing tuned settings of {choice.winner.variant} "
           f"to {shown_path(options.spec_path)} and rebuilding")
    result = write_back_spec(options.spec_path, tuned)
    done = TuneOutcome(plan, outcome, results, choice, tuned, plot, result, notes)
    tune_dir.summary.write_text(json.dumps(done.summary(), indent=2, default=str))
    return done


def tune(options: TuneOptions, report: Report) -> TuneOutcome | TunePlan:
    """The whole command; with `dry_run` returns the prepared plan without measuring or writing the spec."""
    report(f"preparing: building '{options.target}' from {shown_path(options.spec_path)} without its tuned settings")
    plan = prepare(options)
    if options.dry_run:
        return plan
    return run_plan(plan, report)
