"""The ASR example project written into a folder, for the tests and the benchmark: the `asr` starter (what
`tritonkit init --pipeline asr` writes: the shipped command-word model over tritonkit:ensembles/asr.yaml),
optionally with the acoustic model's onnxruntime intra-op thread count pinned."""
from __future__ import annotations

from pathlib import Path

import yaml

from tritonkit.starters.project import init_project


def write_project(folder: Path, threads: int | None = None) -> Path:
    """Returns the spec path; an existing starter spec in `folder` is rewritten."""
    init_project(folder, "asr", force=True)
    spec_path = folder / "tritonkit.yaml"
    if threads is not None:
        spec = yaml.safe_load(spec_path.read_text())
        spec["models"]["acoustic"]["parameters"]["intra_op_thread_count"] = str(threads)
        spec_path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return spec_path
