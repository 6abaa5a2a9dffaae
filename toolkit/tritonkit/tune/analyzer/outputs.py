"""What Model Analyzer wrote: `results/metrics-model-inference.csv` and its latest checkpoint, read into
measurements, and its reports and plots.

The checkpoint holds every measurement and the exact config of every variant (also after an interrupted run, when no CSV
is written); the CSV adds Model Analyzer's own constraint verdict. Both are parsed into the same `Measurement` rows.
"""
import csv
import io
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from tritonkit.errors import TritonkitError
from tritonkit.serve.fallback import gpu_available
from tritonkit.tune.layout import TuneDir
from tritonkit.tune.results.measurements import Measurement, TuneResults

INFERENCE_CSV = "metrics-model-inference.csv"
_CKPT = re.compile(r"^(\d+)\.ckpt$")


def _number(text: str) -> float:
    return float(text.replace(",", "")) if text.strip() else float("nan")


def parse_inference_csv(text: str) -> list[Measurement]:
    """Rows of Model Analyzer's inference table; a pipeline's "Model Config Path" is `top: step1, step2`."""
    rows = []
    for row in csv.DictReader(io.StringIO(text)):
        path = row.get("Model Config Path", "")
        top, _, rest = path.partition(":")
        composing = tuple(p.strip() for p in rest.split(",") if p.strip())
        satisfies = row.get("Satisfies Constraints", "").strip().lower()
        rows.append(Measurement(
            variant=top.strip(), concurrency=int(_number(row.get("Concurrency", "0"))),
            throughput=_number(row.get("Throughput (infer/sec)", "")), p99_ms=_number(row.get("p99 Latency (ms)", "")),
            composing=composing, satisfies={"yes": True, "no": False}.get(satisfies)))
    return rows


def latest_checkpoint(directory: Path) -> Path | None:
    """Model Analyzer writes `0.ckpt`, `1.ckpt`, ... (one per run); the highest index is the newest."""
    found = [(int(m.group(1)), p) for p in directory.glob("*.ckpt") if (m := _CKPT.match(p.name))]
    return max(found)[1] if found else None


def _metric(measurement: dict[str, Any], tag: str) -> float | None:
    for entry in measurement.get("_non_gpu_data", []):
        if isinstance(entry, list) and len(entry) == 2 and entry[0] == tag:
            return float(entry[1]["_value"])
    return None


def parse_checkpoint(data: dict[str, Any], model: str) -> TuneResults:
    """The measurements and variant configs of `model` from a loaded checkpoint document."""
    results = TuneResults(model)
    per_model = data.get("ResultManager.results", {}).get("_results", {}).get(model, {})
    for variant, entry in per_model.items():
        run_config, measurements = entry[0], entry[1]
        model_runs = run_config.get("_model_run_configs", [])
        composing: tuple[str, ...] = ()
        if model_runs:
            first = model_runs[0]
            results.configs[variant] = first["_model_config_variant"]["model_config"]
            for comp in first.get("_composing_config_variants", []):
                results.configs[comp["variant_name"]] = comp["model_config"]
            composing = tuple(c["variant_name"] for c in first.get("_composing_config_variants", []))
            results.composing[variant] = composing
        for run in measurements.values():
            for mcm in run.get("_model_config_measurements", []):
                params = mcm.get("_model_specific_pa_params", {})
                throughput, p99 = _metric(mcm, "perf_throughput"), _metric(mcm, "perf_latency_p99")
                if throughput is None or p99 is None or params.get("concurrency-range") is None:
                    continue
                results.measurements.append(Measurement(variant, int(params["concurrency-range"]), throughput, p99,
                                                        composing))
    results.measurements.sort(key=lambda m: (m.variant, m.concurrency))
    return results


def load_checkpoint(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise TritonkitError(str(path), "", f"cannot read Model Analyzer's checkpoint ({exc.__class__.__name__})",
                             "delete it and run tune again to measure afresh") from None


def read_results(export_dir: Path, checkpoint_dir: Path, model: str) -> TuneResults:
    """Everything measured for `model`: the checkpoint's measurements, with the CSV's verdicts where present."""
    ckpt = latest_checkpoint(checkpoint_dir)
    results = parse_checkpoint(load_checkpoint(ckpt), model) if ckpt else TuneResults(model)
    csv_path = export_dir / "results" / INFERENCE_CSV
    if csv_path.is_file():
        rows = parse_inference_csv(csv_path.read_text())
        verdicts = {(m.variant, m.concurrency): m.satisfies for m in rows}
        results.measurements = [replace(m, satisfies=verdicts.get((m.variant, m.concurrency)))
                                for m in results.measurements]
        if not results.measurements:  # a CSV without checkpoint (copied results): use its rows as they are
            results.measurements = rows
    return results


def report_paths(tune_dir: TuneDir, plot: Path, model: str) -> dict[str, Path]:
    """The outputs worth opening that exist (a run stopped by its budget writes no results CSV nor reports)."""
    paths = {"plot": plot, "html report": tune_dir.reports / "summaries" / model / "result_summary.html",
             "reports": tune_dir.reports, "results": tune_dir.results / INFERENCE_CSV,
             "summary": tune_dir.summary}
    return {name: path for name, path in paths.items() if path.exists()}


def drop_gpu_plots(tune_dir: TuneDir) -> list[Path]:
    """On a host without a GPU, removes Model Analyzer's GPU-metric plots (all zeros there); returns them."""
    if gpu_available():
        return []
    plots = sorted((tune_dir.root / "plots").glob("**/gpu_*.png"))
    for path in plots:
        path.unlink()
    return plots
