"""`tritonkit init --pipeline image` -> build -> serve -> smoke through the CLI, then the served ensemble by hand:
a batch of two encoded images, and an unreadable one refused as a bad request."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import require, run_cli
from tests.init.test_init import init, passed_models

pytestmark = [pytest.mark.server, pytest.mark.slow]


def test_image_starter_builds_serves_and_passes_smoke_as_written(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    require("torch", "pip install 'tritonkit[export]'")
    require("PIL", "pip install pillow")
    http = require("tritonclient.http", "pip install 'tritonclient[all]'")
    from tritonkit.pipelines.image.client import classify, main
    project = tmp_path / "pictures"
    summary = init(project, "image")
    assert summary["install"] == [] and summary["next"][:2] == ["cd pictures", "tritonkit build"]
    pictures = ["samples/blue_square.png", "samples/green_triangle.jpg", "samples/red_circle.png", "samples/orange.png"]
    smoke_files = [picture.rsplit(".", 1)[0] + ".npy" for picture in pictures] + ["samples/orange_pixels.npy"]
    assert sorted(summary["files"]) == sorted(["labels.txt", "tritonkit.yaml", *pictures, *smoke_files])
    built = run_cli("build", "--json", cwd=project, timeout=600)   # trains the CNN (seconds), exports + verifies it
    assert built.returncode == 0, built.stderr[-4000:]
    config = (project / "model_repository" / "classifier" / "config.pbtxt").read_text()
    assert "dynamic_batching" in config and "onnxruntime" in config   # the ONNX model the build exported, batched
    served = run_cli("serve", "--background", "--json", cwd=project, timeout=400)
    try:
        assert served.returncode == 0, served.stderr[-4000:]
        smoke = run_cli("smoke", "--json", cwd=project, timeout=600)
        report = json.loads(smoke.stdout)
        assert smoke.returncode == 0, smoke.stdout[-4000:] + smoke.stderr[-2000:]
        # the drawn samples' labels (image), one colour's pixels (preprocess), the top-3 of fixed logits
        # (postprocess), the export's golden samples (classifier)
        assert {"image", "preprocess", "postprocess", "classifier"} <= passed_models(report)
        cases = {(r["model"], r["check"], r["protocol"]) for r in report["results"] if r["status"] == "pass"}
        assert {("image", f"request:case00{i}", p) for i in range(3) for p in ("http", "grpc")} <= cases

        url = json.loads(served.stdout)["http"].split("://")[-1]
        folder = project / "samples"
        answers = classify(url, [(folder / name).read_bytes() for name in ("green_triangle.jpg", "red_circle.png")])
        assert [best[0][0] for best in answers] == ["green triangle", "red circle"]
        assert [len(best) for best in answers] == [3, 3]
        scores = np.array([[score for _, score in best] for best in answers])
        assert (np.diff(scores, axis=1) <= 0).all() and scores.sum(axis=1).max() <= 1.0001   # best first, sum <= 1
        assert scores[:, 0].min() > 0.5
        assert main([str(folder / "blue_square.png"), "--url", url]) == 0
        assert capsys.readouterr().out.startswith(f"{folder / 'blue_square.png'}: blue square 0.")
        with pytest.raises(http.InferenceServerException) as refused:
            classify(url, [b"these bytes are no picture"])
        assert "IMAGE[0]: not an image Pillow can read" in str(refused.value) and refused.value.status() == "400"
        _perf_analyzer_sends_the_smoke_picture(project, url)
    finally:
        stopped = run_cli("stop", cwd=project)
        assert stopped.returncode == 0, stopped.stderr


def _perf_analyzer_sends_the_smoke_picture(project: Path, url: str) -> None:
    """What `tritonkit tune image` gives perf_analyzer (its first smoke request, an encoded picture) is a request the
    served ensemble answers."""
    import subprocess

    from tritonkit.serve.runtime import perf_analyzer_path, prepare_runtime
    from tritonkit.spec.loader import load_project
    from tritonkit.tune.targets.inputs import perf_inputs

    spec = load_project(project / "tritonkit.yaml").models["image"]
    inputs = perf_inputs("image", spec, project / "model_repository" / "image", project)
    assert set(inputs.flags) == {"input-data"}, inputs
    ran = subprocess.run([str(perf_analyzer_path()), "-m", "image", "-u", url, "-i", "http", "--input-data",
                          str(inputs.flags["input-data"]), "--measurement-mode", "count_windows",
                          "--measurement-request-count", "20"],
                         env=prepare_runtime().env, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert "Throughput:" in ran.stdout
