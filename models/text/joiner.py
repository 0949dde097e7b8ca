"""Tokens that contain a space, for treebanks whose words are written in several pieces.

Vietnamese writes a word as syllables separated by spaces ("Hà Nội", "sinh viên"), and
its treebank keeps such a word as one token with the space inside. The tokenizer cuts
at every space, so each syllable would become a token. Where enough of the treebank's
tokens contain whitespace (at least `MIN_SHARE` of them), the front-end learns this
joiner: an averaged perceptron that decides each single-line gap of whitespace between
two word pieces, from the pieces around it. UDPipe 1's tokenizer (a GRU over characters,
Straka, Hajič & Straková, LREC 2016) also allows spaces inside tokens for such treebanks.
Elsewhere (English, Dutch, Turkish, Hungarian) no token contains a space, and none is
trained.
"""
from __future__ import annotations

import logging
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

import numpy as np

from models.text.perceptron import GapExamples, load_model, save_model, train_averaged

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
MIN_SHARE = 0.01        # of the treebank's tokens containing whitespace
MAX_PIECES = 8          # pieces in one token at most: bounded tokens whatever the text


class Piece(Protocol):
    """What the joiner reads of a tokenizer piece: its text and span."""
    form: str
    start: int
    end: int


def _cls(s: str) -> str:
    c = s[:1]
    if not c:
        return "_"
    if c.isdigit():
        return "d"
    if c.isupper():
        return "U"
    return "l" if c.isalpha() else "p"


def is_gap(text: str, left: Piece, right: Piece) -> bool:
    """Whether the joiner decides the gap between two adjacent pieces: whitespace on one
    line, between a piece that ends and one that begins with a letter or digit."""
    gap = text[left.end:right.start]
    return (bool(gap) and gap.isspace() and "\n" not in gap
            and left.form[-1:].isalnum() and right.form[:1].isalnum())


def gap_features(before: str, left: str, right: str, after: str, n_bits: int) -> list[int]:
    """Hashed features of the gap between the pieces `left` and `right`, with the pieces
    either side ("^" / "$" at the sentence's ends)."""
    l2, l1, r1, r2 = before.lower(), left.lower(), right.lower(), after.lower()
    feats = ["b", "l=" + l1, "r=" + r1, "lr=" + l1 + " " + r1,
             "l2l=" + l2 + " " + l1, "rr2=" + r1 + " " + r2,
             "l2lr=" + l2 + " " + l1 + " " + r1, "lrr2=" + l1 + " " + r1 + " " + r2,
             "ls=" + l1[-2:], "rp=" + r1[:2],
             "cls=" + _cls(before) + _cls(left) + _cls(right) + _cls(after),
             "clsl=" + _cls(left) + _cls(right) + "|" + l1,
             "clsr=" + _cls(left) + _cls(right) + "|" + r1]
    mask = (1 << n_bits) - 1
    return [zlib.crc32(f.encode("utf-8")) & mask for f in feats]


class SpaceJoiner:
    """Averaged perceptron weights over `gap_features`: a gap joins where they sum > 0."""

    def __init__(self, weights: np.ndarray | None = None, n_bits: int = 20):
        self.n_bits = n_bits
        self.weights = weights if weights is not None else np.zeros(1 << n_bits, np.float32)

    def joins(self, before: str, left: str, right: str, after: str) -> bool:
        """Whether `left` and the `right` piece after it belong to one token."""
        return self.weights[gap_features(before, left, right, after, self.n_bits)].sum() > 0

    def join(self, pieces: Iterable[Piece], text: str) -> Iterator[tuple[int, int]]:
        """The spans of the tokens made of `pieces` (in text order), lazily: a token
        spans one piece, or up to MAX_PIECES the joiner keeps together across spaces."""
        it = iter(pieces)
        left = next(it, None)
        if left is None:
            return
        before, start, n = "^", left.start, 1
        right = next(it, None)
        while right is not None:
            after = next(it, None)
            if n < MAX_PIECES and is_gap(text, left, right) \
                    and self.joins(before, left.form, right.form,
                                   after.form if after is not None else "$"):
                n += 1
            else:
                yield start, left.end
                start, n = right.start, 1
            before, left, right = left.form, right, after
        yield start, left.end

    @classmethod
    def train(cls, examples: Sequence[tuple[str, Sequence[Piece], Sequence[tuple[int, int]]]],
              epochs: int = 10, seed: int = 0, n_bits: int = 20) -> SpaceJoiner | None:
        """examples: (sentence text, the tokenizer's pieces of it, the gold token spans).
        None where too few gold tokens contain whitespace for a joiner to be needed."""
        tokens = sum(len(spans) for _, _, spans in examples)
        spaced = sum(1 for text, _, spans in examples for a, b in spans
                     if any(c.isspace() for c in text[a:b]))
        if tokens == 0 or spaced < MIN_SHARE * tokens:
            logger.info("joiner: %d of %d tokens contain whitespace: none trained", spaced,
                        tokens)
            return None
        gaps = GapExamples()
        for text, pieces, spans in examples:
            owner = _owners(pieces, spans)
            forms = ["^"] + [p.form for p in pieces] + ["$"]
            for i in range(len(pieces) - 1):
                if is_gap(text, pieces[i], pieces[i + 1]):
                    same = owner[i] is not None and owner[i] == owner[i + 1]
                    gaps.add(gap_features(forms[i], forms[i + 1], forms[i + 2], forms[i + 3],
                                          n_bits), 1 if same else -1)
        logger.info("joiner: %d of %d tokens contain whitespace; %d gaps, %d inside a token",
                    spaced, tokens, len(gaps), sum(1 for y in gaps.labels if y > 0))
        return cls(train_averaged(gaps, n_bits, epochs, seed, "joiner"), n_bits)

    def save(self, directory: str) -> None:
        save_model(directory, "joiner", self.weights,
                   {"format_version": FORMAT_VERSION, "n_bits": self.n_bits})

    @classmethod
    def load(cls, directory: str) -> SpaceJoiner:
        weights, header = load_model(directory, "joiner", FORMAT_VERSION)
        return cls(weights, header["n_bits"])


def _owners(pieces: Sequence[Piece], spans: Sequence[tuple[int, int]]) -> list[int | None]:
    """For each piece, the index of the gold token span that contains it, or None."""
    out: list[int | None] = []
    k = 0
    for p in pieces:
        while k < len(spans) and spans[k][1] <= p.start:
            k += 1
        inside = k < len(spans) and spans[k][0] <= p.start and p.end <= spans[k][1]
        out.append(k if inside else None)
    return out
