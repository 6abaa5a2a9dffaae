"""The smoke report: a row per model with failures in full for people, a JSON document for pipelines."""
from collections.abc import Sequence
from dataclasses import dataclass

from tritonkit.smoke.checks import FALLBACK, UNKNOWN_MODEL, CheckResult

MARK = {"pass": "PASS", "fail": "FAIL", "skip": "skip"}
#: How rows not about one model (server liveness, health after bad requests, stub restarts) are listed.
SERVER = "(server)"


@dataclass(frozen=True)
class ModelSummary:
    """One model's counts over every protocol checked; `served_as` names a stand-in backend."""

    model: str
    passed: int
    failed: int
    skipped: int
    served_as: str

    def as_dict(self) -> dict:
        return {"model": self.model, "passed": self.passed, "failed": self.failed, "skipped": self.skipped,
                "served_as": self.served_as}


def _owner(result: CheckResult) -> str:
    """The model a row is about; the server's rows (and the request to a model that does not exist) under `(server)`."""
    return SERVER if result.model in ("-", UNKNOWN_MODEL) else result.model


def per_model(results: list[CheckResult]) -> list[ModelSummary]:
    """Models in the order they were first checked; the server's own rows under `(server)`."""
    names = list(dict.fromkeys(_owner(r) for r in results))
    out = []
    for name in names:
        rows = [r for r in results if _owner(r) == name]
        passed, failed, skipped = (sum(r.status == s for r in rows) for s in MARK)
        out.append(ModelSummary(name, passed, failed, skipped, next((r.served_as for r in rows if r.served_as), "")))
    return out


def _aligned(rows: Sequence[Sequence[str]], right: frozenset[int] = frozenset()) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
            for row in rows]


def model_table(results: list[CheckResult]) -> str:
    """One row per model: its result, passed/failed/skipped counts and the backend it ran on when a stand-in."""
    rows = [("model", "result", "passed", "failed", "skipped", "")]
    rows += [(m.model, "FAIL" if m.failed else "PASS", str(m.passed), str(m.failed), str(m.skipped),
              f"({m.served_as})" if m.served_as else "") for m in per_model(results)]
    return "\n".join(_aligned(rows, right=frozenset({2, 3, 4})))


def failures(results: list[CheckResult]) -> str:
    """Every failed check with its whole message, one paragraph each."""
    return "\n".join(f"FAIL {_owner(r)} {r.check} ({r.protocol}): {r.detail}" for r in results if r.status == "fail")


def table(results: list[CheckResult]) -> str:
    """Every check's row (--verbose): check, model, protocol, result and detail, then the total."""
    rows = [("check", "model", "proto", "result", "detail")]
    rows += [(r.check, r.model, r.protocol, MARK[r.status] + (f" ({r.served_as})" if r.served_as else ""), r.detail)
             for r in results]
    lines = _aligned(rows)
    lines.insert(1, "  ".join("-" * len(cell) for cell in lines[0].split("  ") if cell))
    return "\n".join([*lines, summary_line(results)])


def text(results: list[CheckResult], *, quiet: bool = False, verbose: bool = False) -> str:
    """The people's report: the model table (every row with --verbose), failures in full, the total line;
    `quiet` keeps only the failures and the total."""
    if verbose:
        parts = [table(results)]
    else:
        parts = [] if quiet else [model_table(results)]
        if any(r.status == "fail" for r in results):
            parts.append(failures(results))
        parts.append(summary_line(results))
    return "\n\n".join(parts) if not quiet else "\n".join(parts)


def summary_line(results: list[CheckResult]) -> str:
    """Counts, the protocol when only one was checked, and the models that ran on a stand-in backend."""
    counts = {s: sum(r.status == s for r in results) for s in MARK}
    line = f"smoke result: {counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped"
    protocols = sorted({r.protocol for r in results} - {"-"})
    if len(protocols) == 1:
        line += f" ({protocols[0]} only)"
    fallbacks = fallback_models(results)
    if fallbacks:
        line += f"; served through the {FALLBACK}, not their declared backend: {', '.join(fallbacks)}"
    return line


def fallback_models(results: list[CheckResult]) -> list[str]:
    return sorted({r.model for r in results if r.served_as == FALLBACK})


def as_json(results: list[CheckResult], target: dict, models: list[str] | None = None) -> dict:
    """`models`: the --model selection (None: every model of the repository)."""
    return {"ok": not any(r.status == "fail" for r in results), "target": target,
            "fallback_models": fallback_models(results), "selected_models": models,
            "models": [m.as_dict() for m in per_model(results)], "results": [r.as_dict() for r in results]}
