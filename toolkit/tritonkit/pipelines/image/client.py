"""Classify image files with a served image pipeline: one HTTP request to the `image` ensemble, a batch row per file.

IMAGE is the file's bytes as they are (PNG, JPEG, anything Pillow reads), [files, 1] BYTES; the answer is the k best
labels with their probabilities per file. Example (the image starter, `tritonkit serve --background` on port 8000):
    python -m tritonkit.pipelines.image.client samples/red_circle.png samples/green_triangle.jpg --url 127.0.0.1:8000
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import tritonclient.http as httpclient


def classify(url: str, images: list[bytes], model: str = "image") -> list[list[tuple[str, float]]]:
    """(label, probability) pairs, best first, for each encoded image."""
    tensor = httpclient.InferInput("IMAGE", [len(images), 1], "BYTES")
    tensor.set_data_from_numpy(np.array([[data] for data in images], dtype=object))
    result = httpclient.InferenceServerClient(url).infer(model, [tensor])
    rows = zip(result.as_numpy("LABELS"), result.as_numpy("SCORES"))
    return [[(name.decode(), float(score)) for name, score in zip(names, scores)] for names, scores in rows]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("images", nargs="+", type=Path, help="image files (PNG, JPEG, ...)")
    parser.add_argument("--url", default="127.0.0.1:8000", help="Triton's HTTP host:port [default: %(default)s]")
    parser.add_argument("--model", default="image", help="the ensemble to call [default: %(default)s]")
    args = parser.parse_args(argv)
    answers = classify(args.url, [path.read_bytes() for path in args.images], args.model)
    for path, best in zip(args.images, answers):
        print(f"{path}: " + ", ".join(f"{label} {score:.3f}" for label, score in best))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
