"""The image pipeline as tritonkit's core sees it: a starter whose classifier the build trains, and the sample
pictures init draws for its smoke cases."""
from __future__ import annotations

from pathlib import Path

from tritonkit.plugin.contract import Pipeline, Starter


def _samples(root: Path) -> list[Path]:
    """The starter's sample pictures (Pillow, imported when init runs)."""
    from tritonkit.pipelines.image.shapes.samples import write_samples

    return write_samples(root)


PIPELINE: Pipeline = Pipeline(
    "image", "image classification (decode + resize -> a small CNN on ONNX Runtime -> top-k labels), "
             "the CNN trained by the build on drawn shapes",
    Starter(needs={"PIL": "pillow", "torch": "tritonkit[export]", "onnxruntime": "tritonkit[export]"},
            generate=_samples, generate_command="python -m tritonkit.pipelines.image.shapes.samples ."),
)
