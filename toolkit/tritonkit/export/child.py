"""Entry point of the isolated export process: `python -m tritonkit.export.child <cache slot>/job.json`.

Writes result.json on success, error.json for a located error (re-raised by the parent; a malformed job is one),
and progress events (one JSON line per stage) that the parent relays to the terminal. Exit codes: 0 ok, 3 located
error, 1 unexpected exception (traceback in the log).
"""
import json
import sys
import time
import traceback
from pathlib import Path

from tritonkit.errors import TritonkitError
from tritonkit.export.cache import Entry
from tritonkit.export.errors import ExportError
from tritonkit.export.job import ExportJob, read, write


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

    job_path = Path(argv[1])
    entry = Entry(job_path.parent.name, job_path.parent)  # the job's cache slot: its other files are found by name
    progress = FileProgress(entry.file("progress.jsonl"))
    try:
        from tritonkit.export.pipeline import run_job  # reported: an import that fails is the job's error

        outcome = run_job(read(ExportJob, job_path), entry.artifacts, progress)
    except TritonkitError as err:
        kind = type(err).__name__ if isinstance(err, ExportError) else "ExportError"
        entry.file("error.json").write_text(json.dumps({"kind": kind, "file": err.file, "field": err.field,
                                                        "problem": err.problem, "fix": err.fix}))
        traceback.print_exc()
        return 3
    except BaseException:
        traceback.print_exc()
        return 1
    write(outcome, entry.file("result.json"))
    progress("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
