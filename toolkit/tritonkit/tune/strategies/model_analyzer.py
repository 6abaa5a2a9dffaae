"""Model Analyzer's own search as a strategy: its quick or brute mode over one model, or over a pipeline it profiles
(`targets/model.py`); it walks the space and measures with perf_analyzer itself (`analyzer/`), and tritonkit chooses
the winner, writes it back to the spec, rebuilds and reports."""
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tritonkit.errors import TritonkitError
from tritonkit.repository.build import BuildResult
from tritonkit.spec.loader import shown_path
from tritonkit.spec.tuned import TunedModel
from tritonkit.tune.analyzer import outputs
from tritonkit.tune.analyzer.failures import explain
from tritonkit.tune.analyzer.prepare import TunePlan, prepare
from tritonkit.tune.analyzer.resume import prepare_resume, resume_key
from tritonkit.tune.analyzer.runner import RunOutcome, format_elapsed, run_analyzer
from tritonkit.tune.options import TuneOptions
from tritonkit.tune.results import report as report_mod
from tritonkit.tune.results.mapping import tuned_entries
from tritonkit.tune.results.measurements import TuneResults
from tritonkit.tune.results.plot import save_plot
from tritonkit.tune.results.provenance import provenance
from tritonkit.tune.results.winner import Choice, choose
from tritonkit.tune.results.writeback import write_back_spec

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
        return outputs.report_paths(self.plan.tune_dir, self.plot, self.plan.target.name)


def run_plan(plan: TunePlan, report: Report) -> TuneOutcome:
    """Runs a prepared plan to the end: measure (or resume), choose, write back, rebuild, plot."""
    options, tune_dir = plan.options, plan.tune_dir
    if prepare_resume(tune_dir, resume_key(plan.config, tune_dir.built)):
        report(f"resuming: measurements in {tune_dir.checkpoints} are reused (delete {tune_dir.root} to start over)")
    outcome = run_analyzer(tune_dir.config, tune_dir, options.budget_minutes * 60.0, report)
    results = outputs.read_results(tune_dir.root, tune_dir.checkpoints, plan.target.name)
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
    if outputs.drop_gpu_plots(tune_dir):
        notes.append("no GPU on this host: Model Analyzer's GPU plots (all zeros here) were left out")
    remote = options.launch == "remote"
    tuned: dict[str, TunedModel] = {}
    if remote:
        notes.append("remote launch measures the running server's configuration only; the spec is unchanged")
        title = f"{plan.target.name}: remote server"
    else:
        tuned = tuned_entries(results, choice.winner.variant, plan.target, plan.specs,
                              provenance(options, choice.winner.best))
        title = f"{plan.target.name}: throughput vs p99 ({options.mode} search, objective {options.objective})"
    plot = save_plot(results, choice, options.constraints, tune_dir.plot, title, labels)
    result = None
    if not remote:
        report(f"[tune {format_elapsed(outcome.elapsed_s)}] writing tuned settings of {choice.winner.variant} "
               f"to {shown_path(options.spec_path)} and rebuilding")
        result = write_back_spec(options.spec_path, tuned)
    done = TuneOutcome(plan, outcome, results, choice, tuned, plot, result, notes)
    tune_dir.summary.write_text(json.dumps(done.summary(), indent=2, default=str))
    return done


def plan(options: TuneOptions, report: Report) -> TunePlan:
    """The baseline built and Model Analyzer's config written, nothing measured (what `--dry-run` prints)."""
    report(f"preparing: building '{options.target}' from {shown_path(options.spec_path)} without its tuned settings")
    return prepare(options)


def run(options: TuneOptions, report: Report) -> TuneOutcome:
    """The whole search: prepare, measure (or resume), choose, write back, rebuild, plot."""
    return run_plan(plan(options, report), report)
