"""`asr: {graph}` in a spec: `tritonkit build` makes TLG.fst into the decoder's version folder, cached like an
export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.asr.vocab import posteriors, write_inputs
from tests.conftest import run_cli
from tritonkit.pipelines.asr.graph.info import GRAPH_FILES
from tritonkit.pipelines.asr.runtime.decoder import Graph, WfstDecoder


def _project(tmp_path: Path, graph: dict) -> Path:
    write_inputs(tmp_path / "lang")
    (tmp_path / "model.py").write_text("class TritonPythonModel:\n    pass\n")
    decoder = {
        "backend": "python", "max_batch_size": 0, "versions": [1, 2],
        "input": [{"name": "LOG_PROBS", "data_type": "TYPE_FP32", "dims": [-1, 28]}],
        "output": [{"name": "TEXT", "data_type": "TYPE_STRING", "dims": [1]}],
        "files": {"model.py": "model.py"}, "asr": {"graph": graph},
    }
    (tmp_path / "tritonkit.yaml").write_text(yaml.safe_dump({"version": 1, "models": {"decoder": decoder}}))
    return tmp_path


def _build(project: Path) -> dict:
    done = run_cli("build", "--json", cwd=project)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow  # builds TLG graphs through the CLI: seconds each
def test_build_puts_the_graph_in_each_version_folder_and_reuses_the_cache(tmp_path: Path) -> None:
    project = _project(tmp_path,
                       {"tokens": "lang/tokens.txt", "lexicon": "lang/lexicon.txt", "grammar": "lang/grammar.txt"})
    first = _build(project)["graphs"]["decoder"]
    assert (
        first["cache_hit"] is False
        and first["states"] > 0
        and first["arcs"] > first["states"]
        and first["lm"] == "grammar"
    )
    for version in ("1", "2"):
        folder = project / "model_repository" / "decoder" / version
        assert sorted(p.name for p in folder.iterdir()) == [
            "TLG.fst",
            "lexicon.txt",
            "model.py",
            "tokens.txt",
            "words.txt",
        ]
    decoder = WfstDecoder(Graph.load(project / "model_repository" / "decoder" / "1"))
    assert decoder.decode(posteriors(["call", "four", "two"])).text == "call four two"

    second = _build(project)["graphs"]["decoder"]
    assert second["cache_hit"] is True and (second["states"], second["arcs"]) == (first["states"], first["arcs"])

    (project / "lang" / "grammar.txt").write_text("stop\n")  # new content: a new graph
    third = _build(project)["graphs"]["decoder"]
    assert third["cache_hit"] is False and third["states"] < first["states"]


@pytest.mark.slow  # builds TLG graphs through the CLI: seconds each
def test_text_output_reports_graph_sizes(tmp_path: Path) -> None:
    project = _project(tmp_path,
                       {"tokens": "lang/tokens.txt", "lexicon": "lang/lexicon.txt", "corpus": "lang/corpus.txt",
                        "ngram_order": 2})
    done = run_cli("build", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "graph decoder: TLG " in done.stdout and "(corpus, 16 words, 28 tokens), built in" in done.stdout


def _refused(tmp_path: Path, graph: dict) -> str:
    done = run_cli("build", cwd=_project(tmp_path, graph))
    assert done.returncode == 2 and not (tmp_path / "model_repository").exists()
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.slow  # builds TLG graphs through the CLI: seconds each
def test_spec_errors_are_one_line(tmp_path: Path) -> None:
    line = _refused(tmp_path / "a",
                    {"tokens": "lang/tokens.txt", "lexicon": "lang/lexicon.txt", "grammar": "lang/g.txt",
                     "corpus": "lang/corpus.txt"})
    assert (
        "models.decoder.asr.graph" in line and "give exactly one of arpa, corpus, grammar (got corpus, grammar)" in line
    )
    line = _refused(tmp_path / "b",
                    {"tokens": "lang/tokens.txt", "lexicon": "lang/lexicon.txt", "grammar": "../outside.txt"})
    assert line.startswith("tritonkit.yaml: models.decoder.asr.graph.grammar: '../outside.txt' resolves to")
    line = _refused(tmp_path / "c",
                    {"tokens": "lang/tokens.txt", "lexicon": "lang/lexicon.txt", "grammar": "lang/missing.txt"})
    assert line.startswith("tritonkit.yaml: models.decoder.asr.graph.grammar: file 'lang/missing.txt' not found")


@pytest.mark.slow  # a build through the CLI: seconds
def test_bad_lexicon_is_one_line_naming_the_lexicon(tmp_path: Path) -> None:
    project = _project(tmp_path,
                       {"tokens": "lang/tokens.txt", "lexicon": "lang/lexicon.txt", "grammar": "lang/grammar.txt"})
    (project / "lang" / "lexicon.txt").write_text("stop s t o p\nplay p l Ä y\n")
    done = run_cli("build", cwd=project)
    assert done.returncode == 2
    assert done.stderr.strip() == ("lang/lexicon.txt: line 2: word 'play' uses token 'Ä', which is not in "
                                   "lang/tokens.txt; add 'Ä' to the token list or spell 'play' with listed tokens")
    assert not list((project / ".tritonkit" / "cache" / "asr_graph").iterdir())


@pytest.mark.slow  # builds TLG graphs through the CLI: seconds each
def test_another_model_decodes_with_its_own_copy_of_the_graph(tmp_path: Path) -> None:
    """Triton from s3:// downloads each model apart: a model decoding with another model's graph gets its own copy
    (files: model:<graph model>/TLG.fst ...), byte for byte what the graph model serves, and validate accepts it."""
    project = _project(tmp_path,
                       {"tokens": "lang/tokens.txt", "lexicon": "lang/lexicon.txt", "grammar": "lang/grammar.txt"})
    spec = yaml.safe_load((project / "tritonkit.yaml").read_text())
    spec["models"]["stream"] = {**spec["models"]["decoder"], "asr": None, "versions": [1],
                                "files": {"model.py": "model.py", **{f: f"model:decoder/{f}" for f in GRAPH_FILES}}}
    (project / "tritonkit.yaml").write_text(yaml.safe_dump(spec))
    built = _build(project)
    assert built["model_files"] == {"stream": {f: f"model:decoder/{f}" for f in GRAPH_FILES}}
    repository = project / "model_repository"
    for file in GRAPH_FILES:
        assert (repository / "stream" / "1" / file).read_bytes() == (repository / "decoder" / "2" / file).read_bytes()
    decoder = WfstDecoder(Graph.load(repository / "stream" / "1"))
    assert decoder.decode(posteriors(["call", "four", "two"])).text == "call four two"
    assert run_cli("validate", "model_repository", cwd=project).returncode == 0
