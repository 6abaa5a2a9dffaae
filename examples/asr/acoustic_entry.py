"""Export entry point of examples/asr/tritonkit.yaml (`source: {python: acoustic_entry:build}`).

The spec's python_path may not leave the project folder (examples/asr), but the model module imports the
package `examples.asr`; this puts the repository root on sys.path for that import only. Every imported
file of the model (model.py, corpus.py, the weights) lies inside the project folder.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from examples.asr.model import build  # noqa: E402

__all__ = ["build"]
