"""The knob search (`tritonkit tune PIPELINE --joint`): every step of an ensemble or BLS pipeline searched together
by a walk over its knobs (`descent.py`, `grid.py`), measured end to end.

Each candidate is the baseline (the spec without `tuned:`) with the point's values in its steps' configs, served on
the embedded Triton and measured against the pipeline itself: with perf_analyzer (`targets/perf.py`), or with its
engine's streaming clients (`targets/engine.py`). The measurements become the same `TuneResults` Model Analyzer's
are read into, so the winner, the table, the plot, the summary and the write-back (`tuned:` per step with
provenance, then a rebuild that must carry the values) are the Model Analyzer strategy's own.
"""
import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf import json_format, text_format

from tritonkit.errors import TritonkitError, shown_path
from tritonkit.repository.build import BuildResult
from tritonkit.spec.loader import load_project
from tritonkit.spec.model import ModelSpec
from tritonkit.spec.project import Project
from tritonkit.spec.tuned import TunedModel
from tritonkit.triton.model_config import pb as mc
from tritonkit.tune.baseline import build_baseline
from tritonkit.tune.layout import TuneDir
from tritonkit.tune.options import TuneOptions
from tritonkit.tune.results import report as report_mod
from tritonkit.tune.results.measurements import Measurement, TuneResults
from tritonkit.tune.results.plot import save_plot
from tritonkit.tune.results.provenance import provenance
from tritonkit.tune.results.winner import DEFAULT_SUFFIX, Choice, choose
from tritonkit.tune.results.writeback import write_back_spec
from tritonkit.tune.space.knobs import (
    Knob,
    Point,
    default_point,
    describe_point,
    grid_size,
    knob_rows,
    normalize,
    point_id,
)
from tritonkit.tune.space.steps import pipeline_knobs, point_configs, tuned_models
from tritonkit.tune.strategies.budget import Trace
from tritonkit.tune.strategies.confirm import confirmed
from tritonkit.tune.strategies.descent import coordinate_descent
from tritonkit.tune.strategies.grid import grid_search
from tritonkit.tune.targets.engine import StreamBench, engines
from tritonkit.tune.targets.inputs import perf_inputs
from tritonkit.tune.targets.perf import Bench, measure, write_candidate
from tritonkit.tune.targets.pipeline import JointTarget, resolve_joint

Report = Callable[[str], None]
Walk = Callable[..., tuple[Point, Trace]]   # (knobs, measure, budget, objective, constraints) -> (best, trace)
#: How the knobs are walked, by `TuneOptions.search`.
WALKS: dict[str, Walk] = {"descent": coordinate_descent, "grid": grid_search}


@dataclass
class JointOutcome:
    """What the search measured, chose and wrote."""

    options: TuneOptions
    target: JointTarget
    knobs: list[Knob]
    points: dict[str, Point]  # variant -> its point
    trace: Trace
    results: TuneResults
    choice: Choice
    tuned: dict[str, TunedModel]
    plot: Path
    build: BuildResult | None
    tune_dir: TuneDir
    bench: Bench | StreamBench
    notes: list[str] = field(default_factory=list)

    @property
    def winner_settings(self) -> str:
        return describe_point(self.points[self.choice.winner.variant], default_point(self.knobs))

    def summary(self) -> dict[str, Any]:
        opts, target = self.options, self.target.as_tune_target()
        return {
            "ok": True, "target": self.target.name, "kind": self.target.kind, "search": opts.search,
            "objective": opts.objective, "constraints": opts.constraints.as_dict(), "concurrency": opts.concurrency,
            "repeats": opts.repeats, "budget": opts.budget, "measured": len(self.trace.measured),
            "grid_size": grid_size(self.knobs), "budget_hit": self.trace.budget_hit, "passes": self.trace.passes,
            "knobs": knob_rows(self.knobs),
            **report_mod.summary(self.choice, self.results, target, opts.objective, opts.constraints),
            "winner_settings": self.winner_settings,
            **({} if self.target.engine is None else {f"{self.target.engine_pipeline}_measurements": [
                {"configuration": m.variant,
                 "settings": describe_point(self.points[m.variant], default_point(self.knobs)),
                 "tokens_per_s": m.throughput, "ttft_p99_ms": m.ttft_ms, "itl_p99_ms": m.itl_ms}
                for m in self.results.measurements]}),
            "tuned": {name: t.model_dump(mode="json", exclude_none=True) for name, t in self.tuned.items()},
            "tune_dir": str(self.tune_dir.root), "plot": str(self.plot), "spec": str(opts.spec_path),
            "repository": str(self.build.repository) if self.build else None, "notes": self.notes,
        }


def _bench(options: TuneOptions, target: JointTarget, spec: ModelSpec, tune_dir: TuneDir,
           notes: list[str]) -> Bench | StreamBench:
    if target.engine is not None:
        return StreamBench(target.name, options.concurrency, options.repeats, options.max_tokens)
    inputs = perf_inputs(target.name, spec, tune_dir.built / target.name, tune_dir.root)
    if inputs.note:
        notes.append(inputs.note)
    data, shapes = inputs.flags.get("input-data"), inputs.flags.get("shape", [])
    return Bench(target.name, options.concurrency, options.repeats, options.measurement_requests,
                 options.stability_percentage, streaming=target.decoupled,
                 input_data=str(data) if data else None, shapes=tuple(shapes) if isinstance(shapes, list) else ())


class _Recorder:
    """Measures a point and files it as a Model Analyzer-style variant (`asr_config_3`, steps `decoder_config_3`)."""

    def __init__(self, target: JointTarget, knobs: list[Knob], configs: dict[str, mc.ModelConfig],
                 bench: Bench | StreamBench,
                 tune_dir: TuneDir, budget: int, report: Report) -> None:
        self.target, self.knobs, self.configs, self.bench = target, knobs, configs, bench
        self.tune_dir, self.budget, self.report = tune_dir, budget, report
        self.results = TuneResults(target.name)
        self.points: dict[str, Point] = {}
        self.default = default_point(knobs)
        self.notes: list[str] = []

    def __call__(self, point: Point) -> Measurement | None:
        index = len(self.points) + len(self.notes) + 1
        suffix = DEFAULT_SUFFIX if point_id(point) == point_id(self.default) else f"_config_{index}"
        label = f"[joint {index}/{self.budget}] {describe_point(point, self.default)}"
        configs = point_configs(point, self.configs, self.knobs)
        found = self._served(point, configs, str(index), suffix, label)
        if found is None:
            return None
        variant, composing = found.variant, found.composing
        for name, variant_name in zip(self.target.models, (variant, *composing)):
            self.results.configs[variant_name] = json_format.MessageToDict(configs[name])
        self.results.composing[variant] = composing
        self.results.measurements.append(found)
        self.points[variant] = point
        spread = "" if self.bench.repeats < 2 else f" (median of {self.bench.repeats})"
        self.report(f"{label}: {describe_measurement(found)}{spread}")
        return found

    def remeasure(self, point: Point, label: str) -> Measurement | None:
        """`point` served and measured again, not recorded (joint_confirm's rounds)."""
        slug = re.sub(r"\W+", "-", label).strip("-")   # "[confirm 1/2] winner" -> confirm-1-2-winner
        found = self._served(point, point_configs(point, self.configs, self.knobs), slug, f"_{slug}", label)
        if found is not None:
            self.report(f"{label}: {describe_measurement(found)}")
        return found

    def _served(self, point: Point, configs: dict[str, mc.ModelConfig], folder: str, suffix: str,
                label: str) -> Measurement | None:
        """`point` served from a candidate repository of its own and measured; None (noted) when that fails."""
        # a folder per candidate: the serving directory is keyed by the repository's path
        repository = write_candidate(self.tune_dir.built, self.tune_dir.root / "candidates" / folder, configs)
        log = self.tune_dir.logs / f"server{suffix}.log"
        try:
            return self._measure(repository, log, self.target.name + suffix,
                                 tuple(m + suffix for m in self.target.models[1:]))
        except TritonkitError as exc:
            self.notes.append(f"{describe_point(point, self.default)}: not measured ({exc})")
            self.report(f"{label}: failed ({exc})")
            return None
        finally:
            shutil.rmtree(repository, ignore_errors=True)

    def _measure(self, repository: Path, log: Path, variant: str, composing: tuple[str, ...]) -> Measurement:
        """A pipeline running an engine: tokens/s, p99 is the time to first token; any other: infer/s and p99
        latency."""
        if isinstance(self.bench, StreamBench):
            assert self.target.streams is not None, "a stream bench measures an engine's pipeline"
            stream = self.target.streams.measure(repository, self.bench, self.tune_dir.root, log)
            return Measurement(variant, self.bench.concurrency, stream.tokens_per_s, stream.ttft_p99_ms, composing,
                               ttft_ms=stream.ttft_p99_ms, itl_ms=stream.itl_p99_ms)
        sample = measure(repository, self.bench, self.tune_dir.root, log)
        return Measurement(variant, self.bench.concurrency, sample.throughput, sample.p99_ms, composing)


def describe_measurement(m: Measurement) -> str:
    """`12.5 infer/s, p99 8.1 ms`, or an engine's `40.2 tokens/s, p99 TTFT 310 ms, p99 ITL 95 ms`."""
    if m.itl_ms is None:
        return f"{m.throughput:.1f} infer/s, p99 {m.p99_ms:.1f} ms"
    return f"{m.throughput:.1f} tokens/s, p99 TTFT {m.p99_ms:.1f} ms, p99 ITL {m.itl_ms:.1f} ms"


def _searched_winner(choice: Choice, points: dict[str, Point], found: Point) -> Choice:
    """The search's own pick as the winner: descent moves only past the noise margin, so a configuration measured
    a little faster by chance (what `choose` alone would take) does not replace the one it stayed with."""
    variant = next((v for v, p in points.items() if point_id(p) == point_id(found)), choice.winner.variant)
    winner = next(r for r in choice.ranking if r.variant == variant)
    if winner is choice.winner or not winner.meets:
        return choice
    others = [r for r in choice.ranking if r is not winner]
    return Choice(winner, choice.default, others[:3], [winner, *others])


def _no_knobs(target: JointTarget, spec_path: Path) -> TritonkitError:
    return TritonkitError(shown_path(spec_path), f"models.{target.name}",
                          f"no step of '{target.name}' ({', '.join(target.models)}) has a knob to search (instances, "
                          "batching or threads; sequence models and ensembles have none)",
                          "give a step dynamic_batching or an intra_op_thread_count, or widen --knobs")


def plan_space(options: TuneOptions) -> tuple[Project, JointTarget, list[Knob]]:
    """The pipeline and its knobs as the spec loads (defaults include a `tuned:` overlay): refusals before building,
    and what `--dry-run` prints. Which knobs exist does not depend on `tuned:`."""
    user = load_project(options.spec_path)
    target = resolve_joint(user, options.target)
    bounds = options.constraints
    if target.engine is None and (bounds.max_ttft_ms is not None or bounds.max_itl_ms is not None):
        labels = " or ".join(dict.fromkeys(e.label for e in engines().values())) or "streaming"
        raise TritonkitError("", "--max-ttft-ms" if bounds.max_ttft_ms is not None else "--max-itl-ms",
                             f"'{target.name}' runs no {labels} engine, so it has no time to first token or "
                             "inter-token gap to bound", "bound its latency with --max-p99-ms")
    knobs = pipeline_knobs(searched_steps(target), user.models, options.max_instances, options.knobs,
                           options.delays_us)
    if not knobs:
        raise _no_knobs(target, options.spec_path)
    return user, target, knobs


@dataclass(frozen=True)
class KnobPlan:
    """What a knob search would walk (`--dry-run`): the pipeline and its knobs; nothing built or measured."""

    options: TuneOptions
    target: JointTarget
    knobs: list[Knob]

    def summary(self) -> dict[str, Any]:
        return {"ok": True, "dry_run": True, "target": self.target.name, "models": list(self.target.models),
                "knobs": knob_rows(self.knobs), "grid_size": grid_size(self.knobs), "budget": self.options.budget}


def plan(options: TuneOptions, report: Report) -> KnobPlan:
    """The pipeline and its knobs as `--dry-run` shows them."""
    _, target, knobs = plan_space(options)
    return KnobPlan(options, target, knobs)


def searched_steps(target: JointTarget) -> tuple[str, ...]:
    """The steps whose knobs are searched: a pipeline's engine (its steps decide tokens/s), else every step."""
    return (target.engine,) if target.engine is not None else target.models


def run(options: TuneOptions, report: Report) -> JointOutcome:
    """The whole knob search: resolve, build the baseline, search, choose, plot, write back (unless told not to)."""
    user, target, _ = plan_space(options)
    tune_dir = TuneDir.for_target(user.root, f"{target.name}.joint")
    tune_dir.make()
    report(f"preparing: building '{target.name}' ({', '.join(target.models[1:])}) without its tuned settings")
    project = build_baseline(options.spec_path, tune_dir, (*target.models, *target.followers))
    knobs = pipeline_knobs(searched_steps(target), project.models, options.max_instances, options.knobs,
                           options.delays_us)
    if not knobs:  # a knob only the `tuned:` overlay gave (threads of a Python model)
        raise _no_knobs(target, options.spec_path)
    notes = [f"'{m}' has no knob to search" for m in searched_steps(target)[1:] if m not in {k.step for k in knobs}]
    bench = _bench(options, target, project.models[target.name], tune_dir, notes)
    configs = {m: text_format.Parse((tune_dir.built / m / "config.pbtxt").read_text(), mc.ModelConfig())
               for m in (*target.models, *target.followers)}
    recorder = _Recorder(target, knobs, configs, bench, tune_dir, options.budget, report)
    search = WALKS[options.search]
    report(f"searching {len(knobs)} knobs ({grid_size(knobs)} configurations in all) by {options.search}, "
           f"at most {options.budget} measured, each at concurrency {options.concurrency}")
    found, trace = search(knobs, recorder, options.budget, options.objective, options.constraints)
    default = normalize(default_point(knobs), knobs)
    if options.confirm_rounds > 0 and recorder.results.measurements and point_id(found) != point_id(default):
        held, line = confirmed(found, default, recorder.remeasure, options.confirm_rounds, options.objective,
                               options.constraints)
        report(line)
        notes.append(line)
        found = found if held else default
    notes += recorder.notes
    if not recorder.results.measurements:
        raise TritonkitError(str(tune_dir.logs), "", f"no configuration of '{target.name}' could be measured "
                             f"({recorder.notes[0] if recorder.notes else 'nothing ran'})",
                             "read the server logs there, and check the pipeline with tritonkit smoke")
    choice = _searched_winner(choose(recorder.results, options.objective, options.constraints, str(tune_dir.logs)),
                              recorder.points, found)
    tune_target = target.as_tune_target()
    plot = save_plot(recorder.results, choice, options.constraints, tune_dir.plot,
                     f"{target.name}: end to end ({options.search}, c={options.concurrency})",
                     report_mod.legend_labels(recorder.results, tune_target))
    tuned: dict[str, TunedModel] = {}
    built = None
    if options.write:
        runs = "perf_analyzer runs" if isinstance(bench, Bench) else f"runs of {options.max_tokens}-token streams"
        how = (f"joint end-to-end search ({options.search}, {len(trace.measured)} configurations, median of "
               f"{options.repeats} {runs} each at concurrency {options.concurrency})")
        best = choice.winner.best
        streamed = [] if best.itl_ms is None or target.streams is None else [
            f"{target.streams.label}: throughput_infer_per_s is tokens/s, p99_latency_ms the p99 time to first token; "
            f"p99 inter-token gap {best.itl_ms:.1f} ms"]
        prov = provenance(options, choice.winner.best).model_copy(update={"model_analyzer_version": None,
                                                                            "notes": [how, *streamed]})
        tuned = tuned_models(recorder.points[choice.winner.variant], knobs, target.name, project.models, configs,
                             prov)
        report(f"writing tuned settings of {', '.join(tuned)} to {shown_path(options.spec_path)} and rebuilding")
        built = write_back_spec(options.spec_path, tuned)
    done = JointOutcome(options, target, knobs, recorder.points, trace, recorder.results, choice, tuned, plot,
                        built, tune_dir, bench, notes)
    tune_dir.summary.write_text(json.dumps(done.summary(), indent=2, default=str))
    return done
