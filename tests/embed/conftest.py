"""Embed fixtures: the 100 test sentences, sentence-transformers' own vectors for them (the reference), and the
embed starter built, served on the embedded Triton and behind `tritonkit gateway`, once a session."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import require

SENTENCES = Path(__file__).with_name("sentences.txt").read_text(encoding="utf-8").splitlines()


def reference(sentences: list[str], folder: str | None = None) -> np.ndarray:
    """SentenceTransformer(folder).encode(sentences): the model's own pipeline, in process."""
    require("sentence_transformers", "pip install sentence-transformers (the reference vectors)")
    from sentence_transformers import SentenceTransformer

    from tritonkit.pipelines.embed.export.encoder import model_dir

    return SentenceTransformer(folder or model_dir(), device="cpu").encode(sentences, convert_to_numpy=True)


@pytest.fixture(scope="session")
def embed_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """(the built project, the gateway's base URL): init, build (export cached), serve and gateway, once."""
    from tests.gateway.conftest import gateway, served, starter

    project = starter(tmp_path_factory.mktemp("embed"), "embed")
    with served(project) as server, gateway(project, server) as base:
        yield project, base
