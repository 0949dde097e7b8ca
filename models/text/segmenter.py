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

import json
import logging
import os
import re
import zlib
from collections.abc import Iterator, Sequence

import numpy as np

from models.text.splitter import _train_epoch

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
MIN_SHARE = 0.05        # of tokens ending inside a run of word characters
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


def token_starts(text: str, forms: Sequence[str]) -> set[int] | None:
    """Offsets in text where each surface token begins (None if they do not align)."""
    out, pos = set(), 0
    for f in forms:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if text[pos:pos + len(f)] != f:
            return None
        out.add(pos)
        pos += len(f)
    return out


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
        indptr, indices = [0], []
        for run, i, _ in gaps:
            indices.extend(gap_features(run, i, n_bits))
            indptr.append(len(indices))
        labels = [1 if g[2] else -1 for g in gaps]
        seg = cls(n_bits=n_bits)
        ip, ix = np.asarray(indptr, np.int64), np.asarray(indices, np.int64)
        y = np.asarray(labels, np.int8)
        w, u = np.zeros(1 << n_bits, np.float32), np.zeros(1 << n_bits, np.float32)
        rng, step = np.random.default_rng(seed), 1
        for epoch in range(epochs):
            step, errors = _train_epoch(ip, ix, y, rng.permutation(len(y)).astype(np.int64),
                                        w, u, step)
            logger.info("segmenter epoch %d: %d errors / %d gaps", epoch + 1, errors, len(y))
        seg.weights = (w - u / step).astype(np.float32)
        return seg

    def save(self, directory: str) -> None:
        os.makedirs(directory, exist_ok=True)
        nz = np.flatnonzero(self.weights).astype(np.int32)
        np.savez_compressed(os.path.join(directory, "segmenter.npz"), index=nz,
                            value=self.weights[nz].astype(np.float16))
        with open(os.path.join(directory, "segmenter.json"), "w", encoding="utf-8") as f:
            json.dump({"format_version": FORMAT_VERSION, "n_bits": self.n_bits,
                       "hash": "crc32"}, f)

    @classmethod
    def load(cls, directory: str) -> WordSegmenter:
        with open(os.path.join(directory, "segmenter.json"), encoding="utf-8") as f:
            header = json.load(f)
        if header.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"segmenter format {header.get('format_version')} != "
                             f"{FORMAT_VERSION}: retrain the front-end")
        data = np.load(os.path.join(directory, "segmenter.npz"))
        w = np.zeros(1 << header["n_bits"], np.float32)
        w[data["index"]] = data["value"].astype(np.float32)
        return cls(w, header["n_bits"])
