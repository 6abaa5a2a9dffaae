"""TLG building: synthetic CTC posteriors decode to the words they spell, through a grammar, a corpus n-gram or an ARPA
LM."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.asr.vocab import posteriors, write_inputs
from tritonkit.errors import TritonkitError
from tritonkit.pipelines.asr.graph.build import build_graph
from tritonkit.pipelines.asr.graph.info import GRAPH_FILES
from tritonkit.pipelines.asr.runtime.decoder import Graph, WfstDecoder

ARPA = """\\data\\
ngram 1=6

\\1-grams:
-0.69897 </s>
-99 <s>
-0.69897 go
-0.69897 up
-0.69897 stop
-0.69897 banana

\\end\\
"""


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_inputs(tmp_path_factory.mktemp("vocab"))


def _decoder(inputs: dict[str, Path], kind: str, out: Path) -> WfstDecoder:
    info = build_graph(inputs["tokens"], inputs["lexicon"], kind, inputs[kind], out)  # type: ignore[arg-type]
    assert info.states > 0 and info.arcs > info.states and info.words == 16 and info.tokens == 28
    assert sorted(p.name for p in out.iterdir()) == sorted(GRAPH_FILES)
    return WfstDecoder(Graph.load(out))


@pytest.mark.parametrize("words",
                         ["call one two three", "call nine nine", "stop", "go up", "go down", "don't stop",
                          "call zero four five six seven eight"])
@pytest.mark.parametrize("kind", ["grammar", "corpus"])
def test_posteriors_spelling_words_decode_to_those_words(
    inputs: dict[str, Path], tmp_path: Path, kind: str, words: str
) -> None:
    decoder = _decoder(inputs, kind, tmp_path / "graph")
    assert decoder.decode(posteriors(words.split())).text == words


def test_grammar_never_outputs_a_forbidden_sentence(inputs: dict[str, Path], tmp_path: Path) -> None:
    decoder = _decoder(inputs, "grammar", tmp_path / "graph")
    # "go one" and "stop stop" are spelled clearly but not allowed; the decoder picks allowed sentences
    assert decoder.decode(posteriors(["go", "one"])).text == "go down"
    assert decoder.decode(posteriors(["stop", "stop"])).text == "stop"
    # weak evidence: the greedy reading "go nine" is forbidden too
    assert decoder.decode(posteriors(["go", "nine"], peak=0.5)).text in {"go up", "go down"}


def test_arpa_lm_decodes_and_skips_words_without_pronunciation(inputs: dict[str, Path], tmp_path: Path) -> None:
    arpa = tmp_path / "lm.arpa"
    arpa.write_text(ARPA)
    info = build_graph(inputs["tokens"], inputs["lexicon"], "arpa", arpa, tmp_path / "graph")
    assert info.skipped_ngrams == 1  # banana
    decoder = WfstDecoder(Graph.load(tmp_path / "graph"))
    assert decoder.decode(posteriors(["go", "up", "stop"])).text == "go up stop"


def test_graph_report_lists_sizes_of_tlg_and_lg(inputs: dict[str, Path], tmp_path: Path) -> None:
    info = build_graph(inputs["tokens"], inputs["lexicon"], "grammar", inputs["grammar"], tmp_path / "g")
    report = info.to_dict()
    assert {"states", "arcs", "lg_states", "lg_arcs", "lm", "seconds"} <= set(report)
    assert report["lm"] == "grammar" and info.lg_states < info.states
    words = (tmp_path / "g" / "words.txt").read_text().split("\n")
    assert words[0] == "<eps> 0" and "#0 17" in words and "</s> 19" in words


def _error(inputs: dict[str, Path], tmp_path: Path, kind: str, **replace: str) -> TritonkitError:
    paths = dict(inputs)
    for key, text in replace.items():
        paths[key] = tmp_path / f"{key}.txt"
        paths[key].write_text(text)
    with pytest.raises(TritonkitError) as caught:
        build_graph(paths["tokens"], paths["lexicon"], kind, paths[kind], tmp_path / "out")  # type: ignore[arg-type]
    assert "\n" not in caught.value.line()
    assert not (tmp_path / "out" / "TLG.fst").exists()
    return caught.value


def test_lexicon_word_with_unknown_token_is_one_line(inputs: dict[str, Path], tmp_path: Path) -> None:
    err = _error(inputs, tmp_path, "grammar", lexicon="stop s t o p\nhello h e l l o\nyes y é s\n")
    assert err.field == "line 3" and err.file.endswith("lexicon.txt")
    assert "word 'yes' uses token 'é', which is not in" in err.problem and "add 'é' to the token list" in err.fix


def test_oov_word_in_grammar_and_corpus_is_one_line(inputs: dict[str, Path], tmp_path: Path) -> None:
    err = _error(inputs, tmp_path, "grammar", grammar="stop\ncall (one|eleven)+\n")
    assert (err.field, err.problem) == ("line 2", "word 'eleven' is not in the lexicon")
    err = _error(inputs, tmp_path, "corpus", corpus="go up\ngo sideways\n")
    assert (err.field, err.problem) == ("line 2", "word 'sideways' is not in the lexicon")
    assert err.line().endswith("add a pronunciation for 'sideways' to the lexicon or remove it from the corpus")


def test_malformed_arpa_is_one_line_not_a_crash(inputs: dict[str, Path], tmp_path: Path) -> None:
    arpa = tmp_path / "bad.arpa"
    arpa.write_text(ARPA.replace("-0.69897 up", "this is not an n-gram"))
    with pytest.raises(TritonkitError) as caught:
        build_graph(inputs["tokens"], inputs["lexicon"], "arpa", arpa, tmp_path / "out")
    assert caught.value.problem.startswith("not a valid ARPA language model: line 8 [this is not an n-gram]")
    assert caught.value.file.endswith("bad.arpa")


def test_token_list_must_number_blank_first(inputs: dict[str, Path], tmp_path: Path) -> None:
    err = _error(inputs, tmp_path, "grammar", tokens="<blk> 1\na 2\n")
    assert err.field == "ids" and "blank as 0" in err.fix
    err = _error(inputs, tmp_path, "grammar", tokens="<blk> 0\na\n")
    assert (err.field, err.problem) == ("line 2", "'a' is not 'symbol id'")
