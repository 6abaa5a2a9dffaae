"""`make demo`: build the example repository from tritonkit.yaml and validate it."""
from __future__ import annotations

import subprocess
import sys


def run(*args: str) -> None:
    """Runs one tritonkit command as a user would, stopping the demo on failure."""
    print(f"$ tritonkit {' '.join(args)}", flush=True)
    code = subprocess.call([sys.executable, "-m", "tritonkit", *args])
    if code:
        sys.exit(code)


if __name__ == "__main__":
    run("build")
    run("validate", "model_repository")
