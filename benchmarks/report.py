"""How a benchmark ends: its table of (measure, value, note) rows, then the JSON headline as the last line."""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def print_report(rows: Sequence[tuple[str, str, str]], result: dict[str, Any]) -> None:
    """Rows aligned on their widest name and value; `result` printed last, as one JSON object."""
    name_width = max(len(name) for name, _, _ in rows)
    value_width = max(len(value) for _, value, _ in rows)
    for name, value, note in rows:
        print(f"{name:<{name_width}} {value:>{value_width}}   {note}")
    print(json.dumps(result))
