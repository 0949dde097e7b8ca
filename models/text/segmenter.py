"""Token boundaries inside runs of letters and digits, for scripts written without spaces.

The tokenizer's scanner cuts text at whitespace and punctuation only, so a Chinese or
Japanese clause would be one token. Where the treebank's tokens often meet with no
space between two word characters (at least `MIN_SHARE` of its tokens), the front-end
learns this segmenter: an averaged perceptron that decides every gap between two
adjacent word characters, from the characters around it, as UDPipe 1's tokenizer
classifies every gap between characters (Straka, Hajič & Straková, LREC 2016). Elsewhere
(English "3pm", Turkish, Hungarian) there is too little to learn and none is trained.
"""
from __future__ import annotations

import logging
import re
import zlib
from collections.abc import Iterator, Sequence

import numpy as np

from models.text.perceptron import GapExamples, load_model, save_model, train_averaged

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
MIN_SHARE = 0.05        # of tokens beginning inside a run of word characters
_RUN = re.compile(r"\w+")


def _cls(c: str) -> str:
    if c.isdigit():
        return "d"
    if c.isupper():
        return "U"
    if c.islower():
        return "l"
    return "o" if c.isalpha() else "p"


def gap_features(run: str, i: int, n_bits: int) -> list[int]:
    """Hashed features of the gap before run[i] (0 < i < len(run))."""
    def c(k: int) -> str:
        return run[k] if 0 <= k < len(run) else ("^" if k < 0 else "$")

    l3, l2, l1, r1, r2, r3 = c(i - 3), c(i - 2), c(i - 1), c(i), c(i + 1), c(i + 2)
    feats = ["b", "l1=" + l1, "r1=" + r1, "l2=" + l2, "r2=" + r2, "l1r1=" + l1 + r1,
             "l2l1=" + l2 + l1, "r1r2=" + r1 + r2, "l2l1r1=" + l2 + l1 + r1,
             "l1r1r2=" + l1 + r1 + r2, "l3l2l1=" + l3 + l2 + l1, "r1r2r3=" + r1 + r2 + r3,
             "l2r2=" + l2 + "|" + r2,
             "cls=" + _cls(l2) + _cls(l1) + _cls(r1) + _cls(r2),
             "at=" + str(min(i, 4)) + "|" + str(min(len(run) - i, 4))]
    mask = (1 << n_bits) - 1
    return [zlib.crc32(f.encode("utf-8")) & mask for f in feats]


class WordSegmenter:
    def __init__(self, weights: np.ndarray | None = None, n_bits: int = 20):
        self.n_bits = n_bits
        self.weights = weights if weights is not None else np.zeros(1 << n_bits, np.float32)

    def iter_cuts(self, run: str) -> Iterator[int]:
        """Positions 0 < i < len(run) where a token begins inside run, in order, lazily
        (the tokenizer stops past its token cap however long the run)."""
        w = self.weights
        for i in range(1, len(run)):
            if run[i - 1].isalnum() and run[i].isalnum() \
                    and w[gap_features(run, i, self.n_bits)].sum() > 0:
                yield i

    def cuts(self, run: str) -> list[int]:
        return list(self.iter_cuts(run))

    @classmethod
    def train(cls, texts: Sequence[tuple[str, set[int]]], epochs: int = 10, seed: int = 0,
              n_bits: int = 20) -> WordSegmenter | None:
        """texts: (sentence text, the offsets where its tokens begin). None where too few
        tokens begin inside a run of word characters for a segmenter to be needed."""
        gaps = [(m.group(), i, m.start() + i in starts) for text, starts in texts
                for m in _RUN.finditer(text) for i in range(1, len(m.group()))
                if m.group()[i - 1].isalnum() and m.group()[i].isalnum()]
        tokens = sum(len(starts) for _, starts in texts)
        inside = sum(1 for g in gaps if g[2])
        if tokens == 0 or inside < MIN_SHARE * tokens:
            logger.info("segmenter: %d of %d tokens begin inside a run of word characters: "
                        "none trained", inside, tokens)
            return None
        examples = GapExamples()
        for run, i, begins in gaps:
            examples.add(gap_features(run, i, n_bits), 1 if begins else -1)
        weights = train_averaged(examples, n_bits, epochs, seed, "segmenter")
        return cls(weights, n_bits)

    def save(self, directory: str) -> None:
        save_model(directory, "segmenter", self.weights,
                   {"format_version": FORMAT_VERSION, "n_bits": self.n_bits})

    @classmethod
    def load(cls, directory: str) -> WordSegmenter:
        weights, header = load_model(directory, "segmenter", FORMAT_VERSION)
        return cls(weights, header["n_bits"])
