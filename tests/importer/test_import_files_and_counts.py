"""`tritonkit import` keeps what Triton loads: the label files a config names travel into the project (and
from there into the built repository), an instance group without `count` keeps Triton's default, and
`--partial` imports what the spec can express while naming each model it left out, one line each."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
import yaml
from google.protobuf import text_format
from onnx import TensorProto, helper, numpy_helper
from tritonclient.grpc import model_config_pb2 as pb

from tests.conftest import REPO_ROOT, run_cli

pytestmark = pytest.mark.slow  # `tritonkit import` and build in child processes: seconds each

DOCS = REPO_ROOT / "tests" / "data" / "triton_docs"
LABELS = "tabby\ntiger\nlion\nlynx\npuma\n"
#: Laid out like Triton's densenet_onnx example (server/docs/examples/model_repository): the graph in 1/model.onnx,
#: the label file next to config.pbtxt, an instance group without count.
CONFIG = """\
name: "densenet_onnx"
platform: "onnxruntime_onnx"
max_batch_size: 0
input [
  {
    name: "data_0"
    data_type: TYPE_FP32
    format: FORMAT_NCHW
    dims: [ 3, 4, 4 ]
  }
]
output [
  {
    name: "fc6_1"
    data_type: TYPE_FP32
    dims: [ 5 ]
    label_filename: "densenet_labels.txt"
  }
]
instance_group [ { kind: KIND_CPU } ]
"""


def classifier_graph() -> onnx.ModelProto:
    """data_0 [3, 4, 4] -> the mean of each channel -> 5 class scores (a real MatMul with fixed weights)."""
    weights = np.arange(15, dtype=np.float32).reshape(3, 5) / 10
    axes = numpy_helper.from_array(np.array([1, 2], dtype=np.int64), "axes")
    graph = helper.make_graph(
        [helper.make_node("ReduceMean", ["data_0", "axes"], ["pooled"], keepdims=0),
         helper.make_node("MatMul", ["pooled", "w"], ["fc6_1"])],
        "densenet_like", [helper.make_tensor_value_info("data_0", TensorProto.FLOAT, [3, 4, 4])],
        [helper.make_tensor_value_info("fc6_1", TensorProto.FLOAT, [5])], [numpy_helper.from_array(weights, "w"), axes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def examples_repository(root: Path) -> Path:
    model = root / "model_repository" / "densenet_onnx"
    (model / "1").mkdir(parents=True)
    (model / "config.pbtxt").write_text(CONFIG)
    (model / "densenet_labels.txt").write_text(LABELS)
    onnx.save(classifier_graph(), str(model / "1" / "model.onnx"))
    return root / "model_repository"


def import_(repository: Path, project: Path, *options: str) -> dict:
    result = run_cli("import", str(repository), "-o", str(project / "tritonkit.yaml"), "--json", *options,
                     cwd=project.parent)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_label_files_are_imported_and_built_into_the_model_folder(tmp_path: Path) -> None:
    summary = import_(examples_repository(tmp_path / "source"), tmp_path / "project")
    assert summary["not_imported"] == []  # was: densenet_labels.txt, "copy it by hand"
    assert "models/densenet_onnx/densenet_labels.txt" in summary["files"]
    spec = yaml.safe_load((tmp_path / "project" / "tritonkit.yaml").read_text())
    assert spec["models"]["densenet_onnx"]["output"][0]["label_filename"] == "models/densenet_onnx/densenet_labels.txt"
    built = run_cli("build", cwd=tmp_path / "project")
    assert built.returncode == 0, built.stderr
    model = tmp_path / "project" / "model_repository" / "densenet_onnx"
    assert (model / "densenet_labels.txt").read_text() == LABELS
    assert (
        text_format.Parse((model / "config.pbtxt").read_text(), pb.ModelConfig()).output[0].label_filename
        == "densenet_labels.txt"
    )


def test_an_instance_group_without_count_keeps_triton_s_default(tmp_path: Path) -> None:
    """Unset stays unset, through the spec and the build: Triton then runs 2 CPU instances for onnxruntime
    (SetDefaultInstanceCount). A count that is written round-trips as written."""
    source = examples_repository(tmp_path / "source")
    config = source / "densenet_onnx" / "config.pbtxt"
    import_(source, tmp_path / "unset")
    spec = yaml.safe_load((tmp_path / "unset" / "tritonkit.yaml").read_text())
    assert spec["models"]["densenet_onnx"]["instance_group"] == [{"kind": "KIND_CPU"}]  # was: count: 1
    assert run_cli("build", cwd=tmp_path / "unset").returncode == 0
    rebuilt = text_format.Parse(
        (tmp_path / "unset" / "model_repository" / "densenet_onnx" / "config.pbtxt").read_text(), pb.ModelConfig()
    )
    assert (
        rebuilt.instance_group[0].count == 0
        and "count" not in (tmp_path / "unset" / "model_repository" / "densenet_onnx" / "config.pbtxt").read_text()
    )
    config.write_text(CONFIG.replace("{ kind: KIND_CPU }", "{ kind: KIND_CPU count: 3 }"))
    import_(source, tmp_path / "three")
    assert yaml.safe_load((tmp_path / "three" / "tritonkit.yaml").read_text())["models"]["densenet_onnx"][
        "instance_group"
    ] == [{"kind": "KIND_CPU", "count": 3}]


def test_partial_import_lists_each_model_it_left_out_and_imports_the_rest(tmp_path: Path) -> None:
    """One model with a setting the spec cannot hold, one whose label file is missing, and the ensemble over
    one of them: all or nothing refuses; --partial imports the rest and names each left-out model once."""
    repository = tmp_path / "ensemble"
    shutil.copytree(DOCS / "ensemble", repository)
    classifier = repository / "image_classifier" / "config.pbtxt"
    classifier.write_text(classifier.read_text() + 'metric_tags { key: "team" value: "vision" }\n')
    (repository / "extra").mkdir()
    (repository / "extra" / "1").mkdir()
    (repository / "extra" / "1" / "model.py").write_text("")
    (repository / "extra" / "config.pbtxt").write_text(
        'backend: "python"\nmax_batch_size: 0\ninput [{name: "I" data_type: TYPE_FP32 dims: [1]}]\n'
        'output [{name: "O" data_type: TYPE_FP32 dims: [1] label_filename: "missing.txt"}]\n')
    whole = run_cli("import", str(repository), "-o", "all/tritonkit.yaml", cwd=tmp_path)
    assert whole.returncode == 2 and not (tmp_path / "all").exists()

    result = run_cli("import", str(repository), "-o", "some/tritonkit.yaml", "--partial", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    left_out = [line for line in result.stdout.splitlines() if line.startswith("not imported: model ")]
    ensembles = [
        n
        for n in sorted(p.parent.name for p in repository.glob("*/config.pbtxt"))
        if "ensemble_scheduling" in (repository / n / "config.pbtxt").read_text()
    ]
    assert left_out == sorted([
        "not imported: model 'extra': ensemble/extra/config.pbtxt: output[0].label_filename: 'missing.txt' is not a "
        "file in the model folder, so Triton refuses to load 'extra'; put the label file in extra/missing.txt, or "
        "remove label_filename",
        "not imported: model 'image_classifier': ensemble/image_classifier/config.pbtxt: metric_tags: tritonkit.yaml "
        "has no field for this setting; remove it from config.pbtxt to import this model, or keep serving it from a "
        "hand-written repository",
        *(f"not imported: model '{n}': ensemble/{n}/config.pbtxt: calls model 'image_classifier', which is not "
          "imported; fix 'image_classifier' to import both"
          for n in ensembles),
    ], key=lambda line: line.split("'")[1])
    spec = yaml.safe_load((tmp_path / "some" / "tritonkit.yaml").read_text())
    assert sorted(spec["models"]) == sorted(
        set(p.parent.name for p in repository.glob("*/config.pbtxt")) - {"extra", "image_classifier", *ensembles}
    )
    assert run_cli("build", cwd=tmp_path / "some").returncode == 0


@pytest.mark.server
def test_an_imported_examples_repository_with_a_label_file_loads_and_classifies(tmp_path: Path) -> None:
    """Built from the import and served on the embedded Triton (the ONNX model through the Python-backend
    fallback): the model loads, and a classification request answers with the imported labels."""
    import tritonclient.http as httpclient

    from tritonkit.serve.server import EmbeddedServer

    import_(examples_repository(tmp_path / "source"), tmp_path / "project")
    assert run_cli("build", cwd=tmp_path / "project").returncode == 0
    image = np.ones((3, 4, 4), dtype=np.float32)
    with EmbeddedServer(tmp_path / "project" / "model_repository",
                        work_dir=tmp_path / "project" / ".tritonkit") as server:
        client = httpclient.InferenceServerClient(server.http_url.removeprefix("http://"))
        assert client.is_model_ready("densenet_onnx")
        request = httpclient.InferInput("data_0", list(image.shape), "FP32")
        request.set_data_from_numpy(image)
        answer = client.infer("densenet_onnx", [request],
                              outputs=[httpclient.InferRequestedOutput("fc6_1", class_count=2)])
    top = [entry.decode().split(":") for entry in answer.as_numpy("fc6_1").reshape(-1)]
    scores = np.ones(3, dtype=np.float32) @ (np.arange(15, dtype=np.float32).reshape(3, 5) / 10)
    assert [(int(index), label) for _, index, label in top] == [(4, "puma"), (3, "lynx")]
    assert float(top[0][0]) == pytest.approx(float(scores[4]))


def test_tensorrt_profiles_and_per_gpu_model_files_import(tmp_path: Path) -> None:
    """`instance_group.profile` and `cc_model_filenames` (once refusing the whole repository) are spec fields:
    the rebuilt config equals the original and every model file is carried."""
    model = tmp_path / "source" / "engine"
    (model / "1").mkdir(parents=True)
    for name in ("model.plan", "a100.plan", "h100.plan"):
        (model / "1" / name).write_bytes(f"engine {name}".encode())  # the plans' contents are TensorRT's to read
    original = ('platform: "tensorrt_plan"\nmax_batch_size: 8\n'
                'cc_model_filenames [{ key: "8.0" value: "a100.plan" }, { key: "9.0" value: "h100.plan" }]\n'
                'input [{ name: "x" data_type: TYPE_FP32 dims: [4] }]\noutput [{ name: "y" data_type: TYPE_FP32 dims: '
                '[4] }]\ninstance_group [{ kind: KIND_GPU count: 2 profile: ["0", "1"] }]\n')
    (model / "config.pbtxt").write_text(original)
    import_(tmp_path / "source", tmp_path / "project")
    assert run_cli("build", cwd=tmp_path / "project").returncode == 0
    rebuilt = tmp_path / "project" / "model_repository" / "engine"
    expected = text_format.Parse(original, pb.ModelConfig(name="engine"))
    assert text_format.Parse((rebuilt / "config.pbtxt").read_text(), pb.ModelConfig()) == expected
    assert sorted(p.name for p in (rebuilt / "1").iterdir()) == ["a100.plan", "h100.plan", "model.plan"]
