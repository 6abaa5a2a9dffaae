"""Decoding graph TLG = T ∘ min(det(L ∘ G)) for CTC models, built with kaldifst/kaldilm/kaldingram (no Triton).

Design note (read by the build and by `runtime/decoder.py`):
- Inputs: `tokens.txt` ("symbol id" lines, ids 0..V-1, id 0 is the CTC blank), `lexicon.txt` ("word t1 t2 ..."
  lines, several lines per word for alternative pronunciations) and one G source: an ARPA file, a text corpus
  (a Kneser-Ney n-gram is trained from it at build time with kaldingram) or a grammar (`grammar.py`).
- Labels: graph input labels are token id + 1 (0 is epsilon), because `kaldi_decoder.DecodableCtc` reads
  `log_probs[frame, ilabel - 1]`; output labels are word ids of `words.txt` (`<eps>` 0, lexicon words in
  sorted order from 1, then `#0`, `<s>`, `</s>`).
- Entry point: `build.build_graph`; `info.py` (GRAPH_FILES, GraphInfo) imports no kaldi package.
- Steps (`build.py`): L with disambiguation symbols (#0 on a loop for G's back-off arcs, #1.. for homophones
  and prefixes), L ∘ G, determinize*, minimize, disambiguation symbols -> epsilon, T ∘ LG with the CTC
  topology T (blank and token self-loops, repeats only through a blank), arc-sorted.
- Output folder: TLG.fst, words.txt, tokens.txt, lexicon.txt (the decoder reads the lexicon to split the
  frame alignment into words for word times).
- Bad input is a `TritonkitError` with one line: file, field, problem, fix.
"""
