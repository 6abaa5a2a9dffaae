"""How a benchmark ends: its table of (measure, value, note) rows, then the JSON headline as the last line."""
from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from typing import Any


def print_report(rows: Sequence[tuple[str, str, str]], result: dict[str, Any]) -> None:
    """Rows aligned on their widest name and value; `result` printed last, as one JSON object."""
    name_width = max(len(name) for name, _, _ in rows)
    value_width = max(len(value) for _, value, _ in rows)
    for name, value, note in rows:
        print(f"{name:<{name_width}} {value:>{value_width}}   {note}")
    print(json.dumps(result))


def cpu_model() -> str:
    """lscpu's "Model name": figures are compared only on one machine kind (they differ by 1.5x between kinds)."""
    out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    return next((line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name")), "?")
