"""`image_runtime.labels`: logits -> the k best labels and their softmax probabilities."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tritonkit.pipelines.image.runtime.labels import Postprocess, read_labels, top_k


def config(classes: int = 3, k: int = 2, scores: int | None = None) -> dict:
    return {"input": [{"name": "LOGITS", "dims": [str(classes)]}],
            "output": [{"name": "LABEL", "dims": ["1"]}, {"name": "LABELS", "dims": [str(k)]},
                       {"name": "SCORES", "dims": [str(k if scores is None else scores)]}]}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "labels.txt").write_text("cat\ndog\nbird\n\n")
    return tmp_path


def test_top_k_is_best_first_with_softmax_probabilities() -> None:
    best, scores = top_k(np.array([[0.0, 2.0, 1.0], [5.0, 5.0, -1.0]], dtype=np.float32), 2)
    assert best.tolist() == [[1, 2], [0, 1]]   # a tie keeps the lower class first
    e = np.exp([0.0, 2.0, 1.0])
    np.testing.assert_allclose(scores[0], [e[1] / e.sum(), e[2] / e.sum()], rtol=1e-6)
    assert scores.dtype == np.float32


def test_postprocess_answers_label_labels_and_scores(folder: Path) -> None:
    post = Postprocess.from_model_config(config(), folder)
    out = post(np.array([[0.0, 1.0, 3.0]], dtype=np.float32))
    assert out["LABEL"].tolist() == [["bird"]] and out["LABELS"].tolist() == [["bird", "dog"]]
    assert out["SCORES"].shape == (1, 2) and out["SCORES"][0, 0] > out["SCORES"][0, 1]


def test_a_blank_line_inside_the_labels_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "labels.txt").write_text("cat\n\ndog\n")
    with pytest.raises(ValueError, match="labels.txt: line 2 is blank; each line names one class"):
        read_labels(tmp_path / "labels.txt")


@pytest.mark.parametrize(("cfg", "problem"), [
    (config(classes=4), "input LOGITS has dims [4] but labels.txt names 3 classes; make them agree (dims: [3])"),
    (config(k=4), "output LABELS needs dims [k] with 1 <= k <= 3 classes, got [4]"),
    (config(scores=1), "output SCORES needs the dims of LABELS ([2]), got [1]"),
])
def test_a_config_that_disagrees_with_the_labels_file_stops_the_load(folder: Path, cfg: dict, problem: str) -> None:
    with pytest.raises(ValueError) as error:
        Postprocess.from_model_config(json.loads(json.dumps(cfg)), folder)
    assert str(error.value) == problem


def test_a_missing_labels_file_says_how_to_give_it(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"has no labels.txt: give it in the spec \(files: \{labels.txt"):
        Postprocess.from_model_config(config(), tmp_path)
