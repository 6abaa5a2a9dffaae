"""CTC decoding over a TLG graph with kaldi-decoder, whole utterances or incrementally, plus greedy CTC.

Design note (API for the Triton models; only numpy, kaldifst, kaldi_decoder and relative imports here, so the
folder can be copied into a version folder as `asr_runtime`):

    graph = Graph.load(folder)                 # TLG.fst, words.txt, tokens.txt, lexicon.txt from the build
    decoder = WfstDecoder(graph, DecoderConfig(beam=16, max_active=7000, frame_shift_s=0.01, subsampling=4))
    result = decoder.decode(log_probs)         # log_probs: float32 [T, V], V = len(tokens), column 0 = blank
    result.text, result.words                  # "call one two", [Word("call", 0.12, 0.40), ...]
    stream = decoder.stream()                  # one per correlation id
    partial = stream.accept(chunk)             # chunk: [t, V]; best path so far, final states not required
    final = stream.finalize()                  # best path ending in a final state (falls back to any state)
    greedy_decode(log_probs, graph.tokens)     # argmax, collapse repeats, drop blank: the baseline

Both `decode` and `stream` use FasterDecoder (beam, max_active, min_active), so a stream's final transcript is the
offline one. FasterDecoder's best path is limited to final states as soon as any token is in one (Kaldi's behaviour,
whatever `use_final_probs` says), which makes partial results of a grammar jump to complete but unlikely sentences. So
the search runs on a copy of TLG where every state is final, and each real final state gets an arc with an extra "end"
label (log-prob column V, appended to each chunk): `finalize` feeds one frame where only that column is likely, which
leaves only paths that ended in a real final state, with its final weight. With `lattice_beam` set, `decode` uses
LatticeSimpleDecoder instead (beam, lattice_beam; kaldi-decoder 0.3.2 gives that decoder no incremental API). Word times
come from the frame alignment of the best path: its per-frame token labels are collapsed into token segments, which are
split into the decoded words by their pronunciations; a word spans its first token's first frame to its last token's
last frame, in seconds = frame index * frame_shift_s * subsampling.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import kaldi_decoder
import kaldifst
import numpy as np


@dataclass(frozen=True)
class DecoderConfig:
    """Search and timing parameters (from the spec's decoder model parameters)."""

    beam: float = 16.0
    max_active: int = 7000
    min_active: int = 20
    lattice_beam: float | None = None
    frame_shift_s: float = 0.01  # feature frame shift
    subsampling: int = 1  # acoustic model frames per feature frame, e.g. 4


@dataclass(frozen=True)
class Word:
    word: str
    start_s: float
    end_s: float


@dataclass(frozen=True)
class Transcript:
    """The best path: words with times, and how many acoustic frames it covers."""

    words: list[Word] = field(default_factory=list)
    frames: int = 0

    @property
    def text(self) -> str:
        return " ".join(w.word for w in self.words)


def _table(path: Path) -> list[str]:
    """Symbols by id from "symbol id" lines."""
    pairs = [line.split() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = [""] * len(pairs)
    for symbol, index in pairs:
        out[int(index)] = symbol
    return out


@dataclass(frozen=True)
class Graph:
    """A built graph folder: TLG and the tables needed to turn its best path into timed words."""

    fst: kaldifst.StdVectorFst
    words: list[str]
    tokens: list[str]
    prons: dict[str, list[tuple[int, ...]]]

    @functools.cached_property
    def search_fst(self) -> kaldifst.StdVectorFst:
        """TLG with every state final and an end-label arc (label V + 1, column V) from each real final state."""
        fst = self.fst.copy()
        end = fst.add_state()
        label = len(self.tokens) + 1
        for state in range(fst.num_states - 1):
            weight = fst.final(state)
            if weight != kaldifst.TropicalWeight.zero:
                fst.add_arc(state, kaldifst.StdArc(label, 0, weight, end))
            fst.set_final(state, 0.0)
        fst.set_final(end, 0.0)
        return fst

    @classmethod
    def load(cls, folder: Path | str) -> Graph:
        folder = Path(folder)
        tokens = _table(folder / "tokens.txt")
        token_id = {t: i for i, t in enumerate(tokens)}
        prons: dict[str, list[tuple[int, ...]]] = {}
        for line in (folder / "lexicon.txt").read_text(encoding="utf-8").splitlines():
            word, *spelled = line.split()
            prons.setdefault(word, []).append(tuple(token_id[t] for t in spelled))
        return cls(kaldifst.StdVectorFst.read(str(folder / "TLG.fst")), _table(folder / "words.txt"), tokens, prons)


def token_segments(frame_tokens: list[int]) -> list[tuple[int, int, int]]:
    """(token, first frame, last frame) of each non-blank run: CTC's collapse, keeping where each token was."""
    segments: list[tuple[int, int, int]] = []
    previous = 0
    for frame, token in enumerate(frame_tokens):
        if token != 0 and token == previous:
            segments[-1] = (token, segments[-1][1], frame)
        elif token != 0:
            segments.append((token, frame, frame))
        previous = token
    return segments


def _split_words(words: list[str], tokens: tuple[int, ...], prons: dict[str, list[tuple[int, ...]]],
                 partial: bool) -> list[int] | None:
    """How many tokens each word takes so that pronunciations spell `tokens` exactly, or None.

    A partial path may have emitted a word before all its tokens were heard (the graph's determinization
    moves output labels) or heard tokens of a word not emitted yet: with `partial`, the words may end in a
    prefix of a pronunciation (later words then take none) and tokens may be left over.
    """

    @functools.cache
    def split(w: int, t: int) -> tuple[int, ...] | None:
        if w == len(words):
            return () if t == len(tokens) or partial else None
        for pron in prons.get(words[w], []):
            if tokens[t:t + len(pron)] == pron:
                rest = split(w + 1, t + len(pron))
                if rest is not None:
                    return (len(pron), *rest)
        heard = tokens[t:]
        if partial and any(len(heard) < len(p) and p[:len(heard)] == heard for p in prons.get(words[w], [])):
            return (len(heard), *[0] * (len(words) - w - 1))
        return None

    found = split(0, 0)
    return None if found is None else list(found)


class WfstDecoder:
    """Beam search over TLG for CTC log-probs; thread-compatible (each call or stream has its own search)."""

    def __init__(self, graph: Graph, config: DecoderConfig | None = None) -> None:
        self.graph = graph
        self.config = config or DecoderConfig()
        c = self.config
        self._options = kaldi_decoder.FasterDecoderOptions(beam=c.beam, max_active=c.max_active,
                                                           min_active=c.min_active)

    def _check(self, log_probs: np.ndarray) -> np.ndarray:
        array = np.ascontiguousarray(log_probs, dtype=np.float32)
        if array.ndim != 2 or array.shape[1] != len(self.graph.tokens):
            raise ValueError(f"log-probs have shape {tuple(array.shape)}; expected [frames, {len(self.graph.tokens)}] "
                             "(one column per token, blank first)")
        return array

    def decode(self, log_probs: np.ndarray) -> Transcript:
        """The best word sequence of a whole utterance."""
        array = self._check(log_probs)
        if self.config.lattice_beam is not None:
            beam, lattice_beam = self.config.beam, self.config.lattice_beam
            config = kaldi_decoder.LatticeSimpleDecoderConfig(beam=beam, lattice_beam=lattice_beam)
            lattice = kaldi_decoder.LatticeSimpleDecoder(self.graph.fst, config)
            lattice.decode(kaldi_decoder.DecodableCtc(array))
            return self.transcript(*lattice.get_best_path(use_final_probs=True))
        stream = self.stream()
        stream.accept(array)
        return stream.finalize()

    def stream(self) -> DecoderStream:
        """Incremental decoding of one stream."""
        return DecoderStream(self)

    def transcript(self, ok: bool, best: kaldifst.Lattice, partial: bool = False) -> Transcript:
        """Timed words of a best-path lattice (empty when the search found no path).

        A word of a partial path whose tokens are not heard yet starts and ends at the last frame.
        """
        if not ok:
            return Transcript()
        linear, ilabels, olabels, _ = kaldifst.get_linear_symbol_sequence(best)
        if not linear:
            return Transcript()
        ilabels = [label for label in ilabels if label <= len(self.graph.tokens)]  # drop the end label
        words = [self.graph.words[o] for o in olabels]
        segments = token_segments([label - 1 for label in ilabels])
        lengths = _split_words(words, tuple(s[0] for s in segments), self.graph.prons, partial)
        if lengths is None:
            raise ValueError(f"best path {words} does not match lexicon.txt; "
                             "the graph folder mixes files of different builds")
        scale = self.config.frame_shift_s * self.config.subsampling
        timed, first = [], 0
        for word, n in zip(words, lengths):
            start, end = (segments[first][1], segments[first + n - 1][2] + 1) if n else (len(ilabels), len(ilabels))
            timed.append(Word(word, round(start * scale, 6), round(end * scale, 6)))
            first += n
        return Transcript(timed, len(ilabels))


class DecoderStream:
    """One stream's search: `accept` chunks of log-probs, read partial results, `finalize` once at the end."""

    #: Log-prob of the end label on ordinary frames, and of every token on the end frame: "never".
    NEVER = -1.0e10

    def __init__(self, decoder: WfstDecoder) -> None:
        self._decoder = decoder
        self._search = kaldi_decoder.FasterDecoder(decoder.graph.search_fst, decoder._options)
        self._search.init_decoding()
        self.frames = 0
        self.latest = Transcript()  # the best partial path after the last chunk: the fallback of `finalize`

    def _advance(self, with_end: np.ndarray) -> None:
        self._search.advance_decoding(kaldi_decoder.DecodableCtc(with_end, offset=self.frames))
        self.frames += len(with_end)

    def partial(self) -> Transcript:
        """The best path so far, over all states."""
        ok, best = self._search.get_best_path(use_final_probs=False)
        return self._decoder.transcript(ok, best, partial=True)

    def accept(self, log_probs: np.ndarray) -> Transcript:
        """Advances over a chunk [t, V] and returns the best partial path so far (also kept as `latest`)."""
        array = self._decoder._check(log_probs)
        if len(array):
            self._advance(np.concatenate([array, np.full((len(array), 1), self.NEVER, np.float32)], axis=1))
            self.latest = self.partial()
        return self.latest

    def finalize(self) -> Transcript:
        """The best path ending in a real final state with its final weight; the best partial path when none is."""
        end = np.full((1, len(self._decoder.graph.tokens) + 1), self.NEVER, np.float32)
        end[0, -1] = 0.0
        self._advance(end)
        ok, best = self._search.get_best_path(use_final_probs=True)
        _, ilabels, _, _ = kaldifst.get_linear_symbol_sequence(best) if ok else (False, [], [], None)
        if not ilabels or ilabels[-1] != len(self._decoder.graph.tokens) + 1:
            return self.latest
        return self._decoder.transcript(ok, best)


def greedy_tokens(log_probs: np.ndarray) -> list[int]:
    """Greedy CTC: the argmax token of each frame, repeats collapsed, blanks (id 0) dropped."""
    return [s[0] for s in token_segments(np.asarray(log_probs).argmax(axis=1).tolist())]


def greedy_decode(log_probs: np.ndarray, tokens: list[str]) -> str:
    """Greedy CTC text: token symbols joined, word-boundary tokens ("▁" or "|") as spaces.

    With letter tokens and no boundary token the words run together; a model meant to be compared with
    the WFST decoder by word error rate needs a boundary token in its token list.
    """
    text = "".join(tokens[t] for t in greedy_tokens(log_probs))
    return " ".join(text.replace("▁", " ").replace("|", " ").split())
