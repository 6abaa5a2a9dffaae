"""The smoke report: an aligned table for people, a JSON document for pipelines."""
from __future__ import annotations

from tritonkit.smoke.checks import CheckResult

MARK = {"pass": "PASS", "fail": "FAIL", "skip": "skip"}


def table(results: list[CheckResult]) -> str:
    """Rows of check, model, protocol, result and detail, then a one-line total."""
    rows = [("check", "model", "proto", "result", "detail")]
    rows += [(r.check, r.model, r.protocol, MARK[r.status], r.detail) for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(widths[i]) if i < 4 else cell for i, cell in enumerate(row)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths) + "  ------")
    lines.append(summary_line(results))
    return "\n".join(lines)


def summary_line(results: list[CheckResult]) -> str:
    counts = {s: sum(r.status == s for r in results) for s in MARK}
    return f"smoke result: {counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped"


def as_json(results: list[CheckResult], target: dict) -> dict:
    return {"ok": not any(r.status == "fail" for r in results), "target": target, "results": [r.as_dict() for r in results]}
