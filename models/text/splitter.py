"""Sentence boundary detection: averaged perceptron over the gaps between tokens.

Every gap is a candidate (EWT web text often ends a sentence with no
punctuation), not only gaps after . ! ? ... . Features are those of the two
tokens on each side (forms, lowercase, coarse and fine shapes), the whitespace
in the gap and in the gaps either side (none / space / newline / blank line)
and whether the left token is a known abbreviation; they are hashed (crc32)
into a fixed-size float32 weight vector.

Training data are the treebank's documents rendered as running text by
`render_document`: sentence texts joined by a space inside a paragraph,
paragraphs by a blank line, and (`train_tokenizer`) the same documents again
with paragraphs joined by a space, so that lexical cues are learned where no
blank line marks the paragraph (en_ewt dev sentence F1 90.6 with blank lines /
83.0 without, against 90.4 / 80.5 trained on blank lines only).
"""
from __future__ import annotations

import logging
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from models.text.perceptron import GapExamples, load_model, save_model, train_averaged
from models.text.shape import char_classes

if TYPE_CHECKING:
    from models.text.tokenizer import Token

logger = logging.getLogger(__name__)

FORMAT_VERSION = 2  # 2: fine shapes, forms, neighbouring gaps
_END_PUNCT = {".", "!", "?", "...", "…"}


def render_document(paragraphs: Sequence[Sequence[str]], par_sep: str = "\n\n"
                    ) -> tuple[str, list[tuple[int, int]]]:
    """Join sentence texts into running text; return it and each sentence's span."""
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0
    for p, para in enumerate(paragraphs):
        for s, sent in enumerate(para):
            if p or s:
                sep = par_sep if s == 0 else " "
                parts.append(sep)
                pos += len(sep)
            parts.append(sent)
            spans.append((pos, pos + len(sent)))
            pos += len(sent)
    return "".join(parts), spans


def _shape(form: str) -> str:
    if not form:
        return "<none>"
    c = form[0]
    if c.isupper():
        return "X" if len(form) == 1 or form.isupper() else "Xx"
    if c.islower():
        return "x"
    if c.isdigit():
        return "d"
    return form if len(form) <= 3 else form[:3]


def _gap(text: str, a: int, b: int) -> str:
    if a >= b:
        return "none"
    n = text.count("\n", a, b)
    return "space" if n == 0 else ("nl" if n == 1 else "nl2")


class SentenceSplitter:
    def __init__(self, weights: np.ndarray | None = None, abbreviations: set[str] | None = None,
                 n_bits: int = 20):
        self.n_bits = n_bits
        self.weights = weights if weights is not None else np.zeros(1 << n_bits, np.float32)
        self.abbreviations = abbreviations or set()

    def _features(self, text: str, tokens: Sequence[Token], i: int) -> list[int]:
        """Hashed features of the gap after tokens[i]."""
        n = len(tokens)

        def form(k: int) -> str:
            return tokens[k].form if 0 <= k < n else "<s>"

        def gap(k: int) -> str:  # whitespace after tokens[k]
            if k < 0:
                return "start"
            return _gap(text, tokens[k].end, tokens[k + 1].start) if k + 1 < n else "end"

        f_1, f0, f1, f2 = form(i - 1), form(i), form(i + 1), form(i + 2)
        w_1, w0, w1, w2 = f_1.lower(), f0.lower(), f1.lower(), f2.lower()
        s0, s1 = _shape(f0), _shape(f1 if i + 1 < n else "")
        fs0, fs1 = char_classes(f0, 8), char_classes(f1, 8)  # fine shapes
        g = gap(i)
        abbr = "1" if w0 in self.abbreviations else "0"
        end0 = "1" if w0 in _END_PUNCT or w0[-1:] in "!?" else "0"
        feats = [
            "b", "w0=" + w0, "w1=" + w1, "w-1=" + w_1, "w2=" + w2, "s0=" + s0, "s1=" + s1,
            "g=" + g, "w0s1=" + w0 + "|" + s1, "w0g=" + w0 + "|" + g,
            "s0s1g=" + s0 + "|" + s1 + "|" + g, "w-1w0=" + w_1 + "|" + w0,
            "w0w1=" + w0 + "|" + w1, "a0s1=" + abbr + "|" + s1, "e0s1g=" + end0 + "|" + s1 + g,
            "len0=" + str(min(len(w0), 6)) + end0, "c0=" + w0[-1:] + "|" + s1,
            "w-1s1=" + w_1 + "|" + s1 + "|" + end0, "s1w2=" + s1 + "|" + w2,
            # version 2
            "S0=" + fs0, "S1=" + fs1, "S0S1=" + fs0 + "|" + fs1, "w1g=" + w1 + "|" + g,
            "s-1s0s1=" + _shape(f_1) + "|" + s0 + "|" + s1,
            "s0s1s2=" + s0 + "|" + s1 + "|" + _shape(f2),
            "gaps=" + gap(i - 1) + "|" + g + "|" + gap(i + 1),
            "w0w1s1=" + w0 + "|" + w1 + "|" + s1, "suf0s1=" + w0[-3:] + "|" + s1,
            "f1=" + f1, "f0=" + f0, "w-1w0w1=" + w_1 + "|" + w0 + "|" + w1,
        ]
        mask = (1 << self.n_bits) - 1
        return [zlib.crc32(f.encode("utf-8")) & mask for f in feats]

    def boundaries(self, text: str, tokens: Sequence[Token]) -> list[int]:
        """Indices i such that a sentence ends after tokens[i] (last always included)."""
        ends = []
        w = self.weights
        for i in range(len(tokens) - 1):
            if w[self._features(text, tokens, i)].sum() > 0:
                ends.append(i)
        if tokens:
            ends.append(len(tokens) - 1)
        return ends

    def train(self, docs: list[tuple[str, list[Token], set[int]]], epochs: int = 10,
              seed: int = 0) -> None:
        """docs: (text, tokens, gold sentence end offsets)."""
        examples = GapExamples()
        for text, tokens, ends in docs:
            for i in range(len(tokens) - 1):
                examples.add(self._features(text, tokens, i), 1 if tokens[i].end in ends else -1)
        self.weights = train_averaged(examples, self.n_bits, epochs, seed, "splitter")

    def save(self, directory: str) -> None:
        save_model(directory, "splitter", self.weights,
                   {"format_version": FORMAT_VERSION, "n_bits": self.n_bits,
                    "abbreviations": sorted(self.abbreviations)})

    @classmethod
    def load(cls, directory: str) -> SentenceSplitter:
        w, header = load_model(directory, "splitter", FORMAT_VERSION)
        return cls(w, set(header["abbreviations"]), header["n_bits"])
