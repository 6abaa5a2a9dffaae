"""G from an n-gram language model: an ARPA file (kaldilm's arpa2fst) or a corpus trained at build time (kaldingram).

Both tools run in a child process: kaldilm aborts the process on a malformed ARPA file (a C++ KALDI_ERR,
not a Python exception) and both print progress to stderr. The child's stderr is read back to turn the
parser's "line N [...]: problem" into one line for the user. ARPA words with no pronunciation are skipped
by arpa2fst (Kaldi's convention for a large LM over a smaller lexicon) and counted in the graph report.
"""
import re
import subprocess
import sys
from pathlib import Path

import kaldifst

from tritonkit.errors import TritonkitError
from tritonkit.pipelines.asr.graph.lexicon import BOS, DISAMBIG, EOS, Lexicon
from tritonkit.spec.loader import shown_path

_ARPA_ERROR = re.compile(r"\[E\] (.*)")
_ARPA_SKIPPED = re.compile(r"\[W\] .* not in symbol table")


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, check=False)


def arpa_fst(arpa: Path, words_txt: Path, work: Path) -> tuple[kaldifst.StdVectorFst, int]:
    """G from an ARPA file over the word table; also the number of n-grams skipped for unknown words."""
    out = work / "G.fst"
    done = _run(["-m", "kaldilm", f"--read-symbol-table={words_txt}", f"--disambig-symbol={DISAMBIG}",
                 "--max-arpa-warnings=-1", str(arpa), str(out)])
    if done.returncode != 0 or not out.is_file():
        found = _ARPA_ERROR.findall(done.stderr)
        detail = found[-1] if found else (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        raise TritonkitError(shown_path(arpa), "", f"not a valid ARPA language model: {detail}",
                             "fix the file (\\data\\ counts, then \\1-grams: ... lines of 'logprob words [backoff]', "
                             "then \\end\\)")
    return kaldifst.StdVectorFst.read(str(out)), len(_ARPA_SKIPPED.findall(done.stderr))


def check_corpus(corpus: Path, lexicon: Lexicon) -> None:
    """Every corpus word must have a pronunciation: an unknown one would silently become unreachable."""
    known = set(lexicon.word_ids) - {BOS, EOS, DISAMBIG, "<eps>"}
    lines = corpus.read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines, 1):
        oov = next((w for w in line.split() if w not in known), None)
        if oov is not None:
            raise TritonkitError(shown_path(corpus), f"line {n}", f"word '{oov}' is not in the lexicon",
                                 f"add a pronunciation for '{oov}' to the lexicon or remove it from the corpus")
    if not any(line.split() for line in lines):
        raise TritonkitError(shown_path(corpus), "", "the corpus has no sentences", "write one sentence per line")


def train_arpa(corpus: Path, order: int, lexicon: Lexicon, out: Path) -> Path:
    """A Kneser-Ney ARPA model of `order` trained on the corpus with kaldingram (after the OOV check)."""
    check_corpus(corpus, lexicon)
    done = _run(["-m", "kaldingram.train", "--ngram-order", str(order), "--text", str(corpus), "--lm", str(out)])
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        raise TritonkitError(shown_path(corpus), "", f"kaldingram could not train a {order}-gram: {last}",
                             "check the corpus is plain text, one sentence per line")
    return out
