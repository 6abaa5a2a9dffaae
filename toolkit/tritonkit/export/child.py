"""Entry point of the isolated export process: `python -m tritonkit.export.child JOB.json`.

Writes result.json on success, error.json for a located error (re-raised by the parent), and progress
events (one JSON line per stage) that the parent relays to the terminal. Exit codes: 0 ok, 3 located
error, 1 unexpected exception (traceback in the log).
"""
from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path


class FileProgress:
    """Appends {"t": seconds since start, "stage": text} lines to the progress file, flushed at once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.start = time.monotonic()

    def __call__(self, stage: str) -> None:
        with open(self.path, "a") as handle:
            handle.write(json.dumps({"t": round(time.monotonic() - self.start, 3), "stage": stage}) + "\n")
        print(f"[tritonkit export] {stage}", flush=True)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m tritonkit.export.child JOB.json", file=sys.stderr)
        return 2
    job = json.loads(Path(argv[1]).read_text())
    from tritonkit.errors import TritonkitError
    from tritonkit.export.errors import ExportError

    error_file = Path(job["error_file"])
    progress = FileProgress(Path(job["progress_file"]))
    try:
        from tritonkit.export.pipeline import run_job

        result = run_job(job, progress)
    except TritonkitError as err:
        kind = type(err).__name__ if isinstance(err, ExportError) else "ExportError"
        error_file.write_text(json.dumps({"kind": kind, "file": err.file, "field": err.field, "problem": err.problem, "fix": err.fix}))
        traceback.print_exc()
        return 3
    except BaseException:
        traceback.print_exc()
        return 1
    Path(job["result_file"]).write_text(json.dumps(result, indent=2, default=str) + "\n")
    progress("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
