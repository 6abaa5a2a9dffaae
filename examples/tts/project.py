"""The TTS example project written into a folder, for the tests and the benchmark: the `tts` starter (what
`tritonkit init --pipeline tts` writes: Kokoro-82M over tritonkit:ensembles/tts.yaml), optionally with the
speech model's onnxruntime intra-op thread count pinned."""
from __future__ import annotations

from pathlib import Path

import yaml

from tritonkit.starters.project import init_project


def write_project(folder: Path, threads: int | None = None) -> Path:
    """Returns the spec path; an existing starter spec in `folder` is rewritten."""
    init_project(folder, "tts", force=True)
    spec_path = folder / "tritonkit.yaml"
    if threads is not None:
        spec = yaml.safe_load(spec_path.read_text())
        spec["models"]["speech"]["parameters"]["intra_op_thread_count"] = threads
        spec_path.write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True))
    return spec_path
