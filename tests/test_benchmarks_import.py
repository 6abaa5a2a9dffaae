"""Every benchmark still imports: a benchmark runs rarely, so a helper it imports from tritonkit or from another
benchmark that was renamed or inlined would otherwise be found only by the next long run."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
# Modules that run inside another process's interpreter: Triton's Python backend stub, the peers' virtualenv.
ELSEWHERE = {"asr_floor_model": "triton_python_backend_utils", "ort_genai_worker": "onnxruntime_genai"}
IMPORT_ALL = """
import importlib, json, sys
sys.path.insert(0, sys.argv[1])
failed = {}
for name in sys.argv[2:]:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as error:
        failed[name] = error.name
    except Exception as error:
        failed[name] = f"{type(error).__name__}: {error}"
print(json.dumps(failed))
"""


@pytest.mark.slow   # one interpreter importing torch, onnxruntime and tritonclient: ~10 s
def test_every_benchmark_imports_as_its_script_does() -> None:
    names = sorted(p.stem for p in BENCHMARKS.glob("*.py") if p.stem != "__init__")
    run = subprocess.run([sys.executable, "-c", IMPORT_ALL, str(BENCHMARKS), *names], capture_output=True, text=True,
                         check=True, cwd=BENCHMARKS)
    assert json.loads(run.stdout.splitlines()[-1]) == ELSEWHERE
