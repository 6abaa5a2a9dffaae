"""Numerical verification: the ONNX file in onnxruntime against PyTorch, output by output, at several shapes.

An exporter that returns without error can still produce a graph that answers differently (a baked-in
branch, a size frozen from the example); only running both and comparing proves the file is the model.
"""
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tritonkit.errors import NOWHERE, Where
from tritonkit.export.cases import Case
from tritonkit.export.errors import VerificationError
from tritonkit.export.signature import graph_shapes

Reference = Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]
#: Relative errors are measured only where |reference| is at least this (near zero they mean nothing).
REL_FLOOR = 1e-6


@dataclass
class OutputError:
    """Largest absolute and relative difference seen for one output over all cases."""

    max_abs: float = 0.0
    max_rel: float = 0.0


@dataclass
class VerifyReport:
    """What was compared and how close it came; `pairs` are the verified cases with reference outputs."""

    errors: dict[str, OutputError] = field(default_factory=dict)
    cases: list[str] = field(default_factory=list)
    pairs: list[tuple[dict[str, np.ndarray], dict[str, np.ndarray]]] = field(default_factory=list)
    #: every distinct shape each output had over the cases: a size that varies must stay -1 in the spec
    output_sizes: dict[str, list[list[int]]] = field(default_factory=dict)


def check_graph(onnx_path: Path, model: str, where: Where) -> None:
    """`onnx.checker.check_model(full_check=True)` (with shape inference), as a located error."""
    import onnx

    try:
        onnx.checker.check_model(str(onnx_path), full_check=True)
    except Exception as exc:  # the checker raises several unrelated types
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise VerificationError.at(where, f"model '{model}': ONNX checker rejects {onnx_path.name}: {first}",
                                   "try the other exporter (export.exporter) or another opset (export.opset)") from exc


def session(onnx_path: Path):
    """A CPU onnxruntime session (the graph the Triton onnxruntime backend will run)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])


def differences(ours: np.ndarray, ref: np.ndarray) -> tuple[float, float, np.ndarray]:
    """(max abs error, max rel error, abs error array); NaN/inf count as equal only where both agree."""
    if all(x.dtype == np.bool_ or np.issubdtype(x.dtype, np.integer) for x in (ours, ref)):
        diff = np.abs(ours.astype(np.int64) - ref.astype(np.int64)).astype(np.float64)
        return float(diff.max(initial=0.0)), float(diff.max(initial=0.0) > 0), diff
    a, b = ours.astype(np.float64), ref.astype(np.float64)
    same_special = (np.isnan(a) & np.isnan(b)) | (np.isinf(a) & (a == b))
    with np.errstate(invalid="ignore"):  # inf - inf is NaN, replaced below
        diff = np.where(same_special, 0.0, np.abs(a - b))
    diff = np.where(np.isnan(diff), np.inf, diff)
    big = np.abs(b) >= REL_FLOOR
    rel = np.where(big, diff / np.where(big & np.isfinite(b), np.abs(b), 1.0), 0.0)  # an inf reference: rel = diff
    return float(diff.max(initial=0.0)), float(rel.max(initial=0.0)), diff


def beyond_tolerance(diff: np.ndarray, ref: np.ndarray, atol: float, rtol: float) -> np.ndarray:
    """Where `diff` (from `differences`) exceeds atol + rtol * |ref|.

    The bound takes only finite references: a matched inf/NaN has diff 0 and an unmatched one diff inf,
    which a bound of inf (rtol * |inf|) or NaN would let through.
    """
    b = ref.astype(np.float64)
    return diff > atol + rtol * np.abs(np.where(np.isfinite(b), b, 0.0))


def _declared_ok(declared: list[int | str], actual: tuple[int, ...]) -> bool:
    """Whether an output's actual shape fits the graph's declared shape (fixed dims must match)."""
    return len(declared) == len(actual) and all(not isinstance(d, int) or d <= 0 or d == a
                                                for d, a in zip(declared, actual))


def _shape_mismatch(name: str, outputs: dict[str, np.ndarray], expected: dict[str, np.ndarray], model: str,
                    where: Where, shape_note: str) -> VerificationError:
    """An output whose size or dtype differs between onnxruntime and PyTorch while the others agree."""
    ours, ref = outputs[name], expected[name]
    return VerificationError.at(
        where, f"model '{model}': output '{name}' is {ours.dtype}{list(ours.shape)} in onnxruntime but "
        f"{ref.dtype}{list(ref.shape)} in PyTorch {shape_note}",
        "if the size is computed from values (e.g. rounded durations), return those values as an output too so "
        "verification names the one that differs; otherwise make the size independent of the example values "
        "(no Python branches on tensor data)")


def verify(onnx_path: Path, reference: Reference | None, cases: list[Case], output_names: list[str],
           tolerance, *, model: str, where: Where = NOWHERE, keep: int = 4,
           progress: Callable[[str], None] = lambda _msg: None) -> VerifyReport:
    """Runs every case through onnxruntime (and `reference`), raising VerificationError on the first mismatch.

    `tolerance` has `.for_output(name)` giving `.atol`/`.rtol` (the spec's ToleranceSpec). Without a
    reference (an ONNX source) the graph is only run and its shapes checked.
    """
    sess = session(onnx_path)
    declared = graph_shapes(onnx_path)
    ort_inputs = [i.name for i in sess.get_inputs()]
    report = VerifyReport(errors={n: OutputError() for n in output_names})
    for number, case in enumerate(cases, 1):
        progress(f"verify {number}/{len(cases)} ({case.label})")
        missing = set(ort_inputs) - set(case.inputs)
        if missing:
            raise VerificationError.at(where, f"model '{model}': graph expects inputs {sorted(missing)} that the "
                                       f"example does not provide", "name the example inputs like the graph's inputs")
        outputs = dict(zip(output_names, sess.run(output_names, {k: case.inputs[k] for k in ort_inputs})))
        expected = reference(case.inputs) if reference is not None else outputs
        shape_note = f"at inputs {case.shapes()} ({case.label})"
        for name in output_names:
            if not _declared_ok(declared[name][1], outputs[name].shape):
                raise VerificationError.at(
                    where, f"model '{model}': output '{name}' has shape {list(outputs[name].shape)} {shape_note} but "
                    f"the graph declares {declared[name][1]}", "the exporter froze a size from the example; try "
                    "export.exporter: torchscript or name the dim in export.dynamic_axes")
        # outputs of the same shape first: when a size is computed from values (a length regulator repeating each
        # token by its rounded duration), the output that decides it (the durations) names the cause, not the mel
        unequal = [n for n in output_names
                   if outputs[n].shape != expected[n].shape or outputs[n].dtype != expected[n].dtype]
        for name in [n for n in output_names if n not in unequal]:
            ours, ref = outputs[name], expected[name]
            tol = tolerance.for_output(name)
            max_abs, max_rel, diff = differences(ours, ref)
            bad = beyond_tolerance(diff, ref, tol.atol, tol.rtol)
            err = report.errors[name]
            err.max_abs, err.max_rel = max(err.max_abs, max_abs), max(err.max_rel, max_rel)
            if bad.any():
                index = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.where(bad, diff, -1.0))), diff.shape))
                raise VerificationError.at(
                    where.at("tolerance"),
                    f"model '{model}': output '{name}' {list(ours.shape)} differs from PyTorch {shape_note}: "
                    f"max abs error {max_abs:.3g}, max rel error {max_rel:.3g} > atol {tol.atol:g} + rtol {tol.rtol:g} "
                    f"({int(bad.sum())} of {bad.size} elements; at {list(index)} onnx {float(ours[index]):.6g} "
                    f"vs torch {float(ref[index]):.6g})",
                    "if the model branches on tensor values in Python, use torch.where/torch.cond; if this is float "
                    f"noise, raise {where.at('tolerance').field}.outputs.{name}.atol")
        if unequal:
            raise _shape_mismatch(unequal[0], outputs, expected, model, where, shape_note)
        for name in output_names:
            seen = report.output_sizes.setdefault(name, [])
            if list(outputs[name].shape) not in seen:
                seen.append(list(outputs[name].shape))
        shapes = " ".join(f"{n}={list(outputs[n].shape)}" for n in output_names)
        report.cases.append(f"{case.label}: {case.shapes()} -> {shapes}")
        if len(report.pairs) < keep:
            report.pairs.append((case.inputs, expected))
    return report
