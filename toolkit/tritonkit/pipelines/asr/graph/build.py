"""`build_graph`: tokens + lexicon + (ARPA | corpus | grammar) -> TLG.fst and the tables the decoder reads."""
import tempfile
import time
from pathlib import Path

import kaldifst

from tritonkit.pipelines.asr.graph.fsts import ctc_topology, disambig_label, lexicon_fst, relabel_inputs_to_eps, size
from tritonkit.pipelines.asr.graph.grammar import grammar_fst, read_grammar
from tritonkit.pipelines.asr.graph.info import GraphInfo, LmKind
from tritonkit.pipelines.asr.graph.lexicon import Lexicon, read_lexicon, read_tokens
from tritonkit.pipelines.asr.graph.lm import arpa_fst, train_arpa


def _write_tables(lexicon: Lexicon, out: Path) -> None:
    """words.txt, tokens.txt and lexicon.txt as the decoder and arpa2fst read them ("symbol id" / "word t1 t2")."""
    (out / "words.txt").write_text("".join(f"{w} {i}\n" for i, w in enumerate(lexicon.words)), encoding="utf-8")
    (out / "tokens.txt").write_text("".join(f"{t} {i}\n" for i, t in enumerate(lexicon.tokens)), encoding="utf-8")
    prons = (f"{w} {' '.join(lexicon.tokens[t] for t in p)}\n" for w, p in lexicon.prons)
    (out / "lexicon.txt").write_text("".join(prons), encoding="utf-8")


def _lg(lexicon: Lexicon, g: kaldifst.StdVectorFst) -> kaldifst.StdVectorFst:
    """min(det(L ∘ G)) with the disambiguation symbols then turned into epsilons."""
    lex = lexicon_fst(lexicon)
    kaldifst.arcsort(lex, sort_type="olabel")
    kaldifst.arcsort(g, sort_type="ilabel")
    lg = kaldifst.StdVectorFst(kaldifst.compose(lex, g))
    kaldifst.determinize_star(lg, use_log=True)
    kaldifst.minimize_encoded(lg)
    relabel_inputs_to_eps(lg, disambig_label(lexicon, 0))
    kaldifst.arcsort(lg, sort_type="ilabel")
    return lg


def build_graph(tokens: Path, lexicon: Path, lm_kind: LmKind, lm_path: Path, out: Path,
                ngram_order: int = 3) -> GraphInfo:
    """Builds TLG.fst and its tables into `out` (created); raises TritonkitError on bad input, before writing it."""
    start = time.monotonic()
    lex = read_lexicon(lexicon, read_tokens(tokens), tokens)
    out.mkdir(parents=True, exist_ok=True)
    _write_tables(lex, out)
    skipped = 0
    with tempfile.TemporaryDirectory(prefix="tritonkit-graph-") as work:
        if lm_kind == "grammar":
            g = grammar_fst(read_grammar(lm_path, lex), lex)
        else:
            arpa = lm_path if lm_kind == "arpa" else train_arpa(lm_path, ngram_order, lex, Path(work) / "lm.arpa")
            g, skipped = arpa_fst(arpa, out / "words.txt", Path(work))
    lg = _lg(lex, g)
    topo = ctc_topology(len(lex.tokens))
    kaldifst.arcsort(topo, sort_type="olabel")
    tlg = kaldifst.StdVectorFst(kaldifst.compose(topo, lg))
    kaldifst.arcsort(tlg, sort_type="ilabel")
    tlg.write(str(out / "TLG.fst"))
    seconds = round(time.monotonic() - start, 3)
    return GraphInfo(*size(tlg), *size(lg), len(lex.words) - 4, len(lex.tokens), lm_kind, skipped, seconds)
