"""The smoke report: an aligned table for people, a JSON document for pipelines."""
from __future__ import annotations

from tritonkit.smoke.checks import FALLBACK, CheckResult

MARK = {"pass": "PASS", "fail": "FAIL", "skip": "skip"}


def table(results: list[CheckResult]) -> str:
    """Rows of check, model, protocol, result and detail, then a one-line total."""
    rows = [("check", "model", "proto", "result", "detail")]
    rows += [(r.check, r.model, r.protocol, MARK[r.status] + (f" ({r.served_as})" if r.served_as else ""), r.detail)
             for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(widths[i]) if i < 4 else cell for i, cell in enumerate(row)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths) + "  ------")
    lines.append(summary_line(results))
    return "\n".join(lines)


def summary_line(results: list[CheckResult]) -> str:
    """Counts, the protocol when only one was checked, and the models that ran on a stand-in backend."""
    counts = {s: sum(r.status == s for r in results) for s in MARK}
    line = f"smoke result: {counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped"
    protocols = sorted({r.protocol for r in results})
    if len(protocols) == 1:
        line += f" ({protocols[0]} only)"
    fallbacks = fallback_models(results)
    if fallbacks:
        line += f"; served through the {FALLBACK}, not their declared backend: {', '.join(fallbacks)}"
    return line


def fallback_models(results: list[CheckResult]) -> list[str]:
    return sorted({r.model for r in results if r.served_as == FALLBACK})


def as_json(results: list[CheckResult], target: dict) -> dict:
    return {"ok": not any(r.status == "fail" for r in results), "target": target,
            "fallback_models": fallback_models(results), "results": [r.as_dict() for r in results]}
