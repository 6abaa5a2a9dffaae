"""Repository layout as Triton 2.51 reads it (core r24.10 VersionsToLoad, AutoCompleteBackendFields): version
folders, version_policy, default_model_filename, the model file of each loaded version, backends taken from file
and folder names. Each rejected layout gives exactly its one-line error; the close accepted one gives nothing."""
from __future__ import annotations

from pathlib import Path

import pytest

from .repo_helpers import GRAPH, Model, outcome, tensor

IO = tensor("input", "IN", "[4]") + tensor("output", "OUT", "[4]")
ONNX = 'backend: "onnxruntime"\nmax_batch_size: 8\n' + IO
BARE = "max_batch_size: 8\n" + IO  # no platform, no backend: Triton takes them from the folder


def one(config: str, files: dict[str, str], name: str = "m") -> dict[str, Model]:
    return {name: (config, files)}


M = "m/config.pbtxt: "
CASES = [
    ("no-version-folder", one(ONNX, {"model.onnx": GRAPH}), one(ONNX, {"1/model.onnx": GRAPH}),
     M + "version_policy: model 'm' has no version folder, so no version can load; create m/1/ holding the model "
         "file(s)"),
    ("leading-zero-folder-is-not-a-version", one(ONNX, {"01/model.onnx": GRAPH}), one(ONNX, {"1/model.onnx": GRAPH}),
     M + "version_policy: model 'm' has no version folder, so no version can load; create m/1/ holding the model "
         "file(s)"),
    ("specific-version-without-folder",
     one(ONNX + "version_policy { specific { versions: [2] } }\n", {"1/model.onnx": GRAPH}),
     one(ONNX + "version_policy { specific { versions: [1] } }\n", {"1/model.onnx": GRAPH}),
     M + "version_policy.specific.versions: none of versions [2] has a folder (found 1); list an existing version or "
         "create its folder"),
    ("model-file-missing", one(ONNX, {"1/weights.onnx": GRAPH}), one(ONNX, {"1/model.onnx": GRAPH}),
     M + "backend: version 1 has no model.onnx, which the onnxruntime backend loads; put the model file in "
         "m/1/model.onnx (or set default_model_filename)"),
    ("default-model-filename", one(ONNX + 'default_model_filename: "net.onnx"\n', {"1/model.onnx": GRAPH}),
     one(ONNX + 'default_model_filename: "net.onnx"\n', {"1/net.onnx": GRAPH}),
     M + "backend: version 1 has no net.onnx, which the onnxruntime backend loads; put the model file in m/1/net.onnx "
         "(or set default_model_filename)"),
    # Only loaded versions need their file: with the default policy (latest 1) an older empty folder is never read.
    ("model-file-of-every-loaded-version", one(ONNX + "version_policy { all {} }\n", {"1/": "", "2/model.onnx": GRAPH}),
     one(ONNX, {"1/": "", "2/model.onnx": GRAPH}),
     M + "backend: version 1 has no model.onnx, which the onnxruntime backend loads; put the model file in "
         "m/1/model.onnx (or set default_model_filename)"),
    ("loose-folder-name", one(ONNX, {"1.bak/model.onnx": GRAPH}), one(ONNX, {"1/model.onnx": GRAPH}),
     M + "version_policy: Triton loads version 1 from '1/', which does not exist (only '1.bak' does); rename '1.bak' "
         "to '1'"),
    # Triton fills in the backend from the model file in the first sub-folder, or from a `<name>.<backend>` folder name.
    ("backend-from-model-file", one(BARE, {"1/model.bin": ""}), one(BARE, {"1/model.onnx": GRAPH}),
     M + "backend: neither platform nor backend is set, the folder has no model file Triton knows in '1/' and its name "
     "has no '.<backend>' suffix, so Triton cannot tell the backend; set backend (e.g. python, onnxruntime) or "
     "platform"),
    ("backend-from-folder-name", one(BARE, {"1/": ""}), one(BARE, {"1/": ""}, name="m.identity"),
     M + "backend: neither platform nor backend is set, the folder has no model file Triton knows in '1/' and its name "
     "has no '.<backend>' suffix, so Triton cannot tell the backend; set backend (e.g. python, onnxruntime) or "
     "platform"),
]


@pytest.mark.parametrize(("rejected", "accepted", "line"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_layout_rule(rejected: dict[str, Model], accepted: dict[str, Model], line: str, tmp_path: Path) -> None:
    errors, _ = outcome(tmp_path / "rejected", rejected)
    assert errors == [line]
    assert outcome(tmp_path / "accepted", accepted) == ([], [])
