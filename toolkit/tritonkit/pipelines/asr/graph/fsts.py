"""The three FSTs of TLG: the CTC topology T, the lexicon L with disambiguation symbols, and their glue.

FSTs are written as OpenFst text ("src dst ilabel olabel [weight]" arcs, "state [weight]" finals) and
compiled with kaldifst: short to read, and the same text can be inspected when a graph looks wrong.
"""
import kaldifst

from tritonkit.pipelines.asr.graph.lexicon import DISAMBIG, Lexicon


def compile_text(lines: list[str]) -> kaldifst.StdVectorFst:
    """An FST from OpenFst text lines (the first arc's source state is the start state)."""
    return kaldifst.compile("\n".join(lines) + "\n")


def token_label(token_id: int) -> int:
    """Graph input label of a token: id + 1, because 0 is epsilon (and DecodableCtc reads column label - 1)."""
    return token_id + 1


def disambig_label(lexicon: Lexicon, k: int) -> int:
    """Input label of #k: after every token label."""
    return len(lexicon.tokens) + 1 + k


def ctc_topology(num_tokens: int) -> kaldifst.StdVectorFst:
    """T: maps frame labels to tokens. State 0 = after a blank (start), state t = inside token t.

    A token repeats across frames on its self-loop and is emitted once; the same token twice in a row
    needs a blank between them, exactly as CTC collapses its output.
    """
    blank = token_label(0)
    lines = [f"0 0 {blank} 0"]
    for t in range(1, num_tokens):
        lines.append(f"0 {t} {token_label(t)} {token_label(t)}")
    for t in range(1, num_tokens):
        lines += [f"{t} {t} {token_label(t)} 0", f"{t} 0 {blank} 0"]
        lines += [f"{t} {u} {token_label(u)} {token_label(u)}" for u in range(1, num_tokens) if u != t]
    lines += ["0"] + [str(t) for t in range(1, num_tokens)]
    return compile_text(lines)


def lexicon_fst(lexicon: Lexicon) -> kaldifst.StdVectorFst:
    """L with disambiguation symbols: token labels in, word ids out, word id on each pronunciation's first arc.

    State 0 is both start and final; a `#0:#0` loop on it lets G's back-off arcs (`#0` input) through.
    """
    word_id = lexicon.word_ids
    wdisambig = word_id[DISAMBIG]
    lines = [f"0 0 {disambig_label(lexicon, 0)} {wdisambig}"]
    next_state = 1
    for word, pron, k in lexicon.disambiguated():
        labels = [token_label(t) for t in pron] + ([disambig_label(lexicon, k)] if k else [])
        src = 0
        for i, label in enumerate(labels):
            dst = 0 if i == len(labels) - 1 else next_state
            lines.append(f"{src} {dst} {label} {word_id[word] if i == 0 else 0}")
            if dst:
                next_state += 1
            src = dst
    lines.append("0")
    return compile_text(lines)


def relabel_inputs_to_eps(fst: kaldifst.StdVectorFst, first: int) -> None:
    """Input labels >= `first` (the disambiguation symbols) become epsilon, in place.

    kaldifst has no mutable arc iterator, so each state's arcs are read, deleted and added back.
    """
    for state in kaldifst.StateIterator(fst):
        arcs = list(kaldifst.ArcIterator(fst, state))
        if any(a.ilabel >= first for a in arcs):
            fst.delete_arcs(state, len(arcs))
            for a in arcs:
                label = 0 if a.ilabel >= first else a.ilabel
                fst.add_arc(state, kaldifst.StdArc(label, a.olabel, a.weight, a.nextstate))


def size(fst: kaldifst.StdVectorFst) -> tuple[int, int]:
    """(states, arcs)."""
    return fst.num_states, sum(fst.num_arcs(s) for s in range(fst.num_states))
