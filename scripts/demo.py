"""`make demo`: build the example repository, serve it on the embedded Triton, smoke-test it, then stop.

Set KEEP=1 to leave the server running afterwards (`tritonkit stop` ends it). The closing examples are
printed where they can be used: while the kept server runs, or after saying how to keep it running.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys


def tritonkit(*args: str, capture: bool = False) -> str:
    """Runs one tritonkit command as a user would; a failure ends the demo with its exit code."""
    print(f"\n$ tritonkit {' '.join(args)}", flush=True)
    result = subprocess.run([sys.executable, "-m", "tritonkit", *args], stdout=subprocess.PIPE if capture else None,
                            text=True)
    if result.returncode:
        if capture and result.stdout:
            print(result.stdout)
        sys.exit(result.returncode)
    return result.stdout or ""


def python_command() -> str:
    """The interpreter that has numpy and tritonclient, as the reader would type it from here."""
    relative = os.path.relpath(sys.executable)
    return relative if not relative.startswith("..") else sys.executable


def how_to_call(http: str, grpc: str) -> str:
    """Copy-paste examples for the example `classify` pipeline, flush left so that pasting them works."""
    return f"""\
curl -s -X POST http://{http}/v2/models/classify/infer -H 'Content-Type: application/json' \\
  -d '{{"inputs":[{{"name":"RAW","shape":[1,4],"datatype":"FP32","data":[5.1,3.5,1.4,0.2]}}]}}'

{python_command()} - <<'PY'
import numpy as np, tritonclient.grpc as grpcclient
client = grpcclient.InferenceServerClient("{grpc}")
raw = grpcclient.InferInput("RAW", [1, 4], "FP32")
raw.set_data_from_numpy(np.array([[5.1, 3.5, 1.4, 0.2]], dtype=np.float32))
print(client.infer("classify", [raw]).as_numpy("PROBS"))
PY"""


def main() -> None:
    tritonkit("build")
    server = json.loads(tritonkit("serve", "--background", "--json", capture=True))
    print(f"Triton is up: HTTP {server['http']}, gRPC {server['grpc']}, metrics {server['metrics']}")
    examples = how_to_call(server["http"], server["grpc"])
    try:
        tritonkit("smoke")
    finally:
        if os.environ.get("KEEP") == "1":
            print("\nKEEP=1: the server keeps running; call the `classify` ensemble yourself:\n")
            print(examples)
            print("\nStop it with: tritonkit stop   (or .venv/bin/tritonkit stop)")
        else:
            print("\nStopping the server now. To keep it running and call it yourself: KEEP=1 make demo "
                  "(stop it later with: tritonkit stop)")
            tritonkit("stop")
            print("\nWith a server running (KEEP=1 make demo prints these with its own ports), call the "
                  "`classify` ensemble:\n")
            print(examples)


if __name__ == "__main__":
    main()
