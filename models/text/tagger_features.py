"""The linear tagger's features (`tagger.py`): the strings of a word type (form,
lowercase, prefixes and suffixes 1-4, shape, flags, ambiguity class, and the word
classes' strings), hashed once per type (`TypeCache`), and the templates that combine
them over the word and its neighbours (offset, column) and pairs of them. The numba
side (`_tagger_kernels`) turns templates and hashes into weight rows.
"""
from __future__ import annotations

import threading
import zlib
from collections.abc import Sequence

import numpy as np

from models.text import wordclasses
from models.text.shape import char_classes
from models.text.wordclasses import WordClasses

TYPE_FEATURES = ("w", "l", "p1", "p2", "p3", "p4", "s1", "s2", "s3", "s4", "shape", "flags",
                 "amb")
AMB = 12
# (offset, type feature); indices into TYPE_FEATURES
STATIC_TEMPLATES = [(0, i) for i in range(len(TYPE_FEATURES))] + [
    (-1, 1), (-2, 1), (1, 1), (2, 1), (-1, 8), (1, 8), (-1, 10), (1, 10), (2, 10),
    (1, 9), (-1, 7), (1, 6), (-2, 8), (2, 8), (-1, AMB), (1, AMB), (2, AMB), (-2, AMB),
]
PAIR_TEMPLATES = [(-1, 1, 0, 1), (0, 1, 1, 1), (1, 1, 2, 1), (-1, 1, 1, 1), (0, 8, 1, 8),
                  (0, 10, 1, 10), (-1, 10, 0, 10), (0, 1, 1, 10), (0, AMB, 1, AMB),
                  (-1, AMB, 0, AMB), (0, 1, 1, AMB), (0, 8, 1, AMB)]
PAD = ("<s>", "</s>")
PRED = len(TYPE_FEATURES)  # column of the level-1 tag in a stacked tagger
STACK_TEMPLATES = [(0, PRED), (-1, PRED), (1, PRED), (2, PRED), (-2, PRED)]
STACK_PAIRS = [(1, PRED, 2, PRED), (-1, PRED, 1, PRED), (0, 1, 1, PRED), (0, PRED, 1, PRED),
               (0, 1, 0, PRED), (-1, PRED, 0, 1)]
# Word classes (`wordclasses.FEATURES`, columns after TYPE_FEATURES): cluster
# prefixes of the word and its neighbours, WordNet classes with spelling and context.
C4, C6, C10, CF, WN = range(len(TYPE_FEATURES), len(TYPE_FEATURES) + len(wordclasses.FEATURES))
WC_TEMPLATES = [(0, C4), (0, C6), (0, C10), (0, CF), (-1, C6), (1, C6), (-1, CF), (1, CF),
                (-2, C6), (2, C6), (0, WN), (-1, WN), (1, WN)]
WC_PAIRS = [(0, WN, 0, 10), (0, WN, 0, 8), (0, WN, 0, AMB), (-1, WN, 0, WN), (0, WN, 1, WN),
            (0, WN, 1, 1), (-1, 1, 0, WN)]


def templates(stacked: bool, word_classes: bool) -> tuple[np.ndarray, np.ndarray]:
    """(static [k, 2], pairs [m, 4]) templates of a tagger: the base ones, plus the
    level-1 tag's (stacked) and the word classes' where it has them."""
    static, pairs = list(STATIC_TEMPLATES), list(PAIR_TEMPLATES)
    if stacked:
        static, pairs = static + STACK_TEMPLATES, pairs + STACK_PAIRS
    if word_classes:
        static, pairs = static + WC_TEMPLATES, pairs + WC_PAIRS
    return np.array(static, np.int64), np.array(pairs, np.int64).reshape(-1, 4)


def type_strings(form: str, amb: dict[str, str]) -> list[str]:
    """The strings of `TYPE_FEATURES` for one word form (`amb`: ambiguity classes)."""
    low = form.lower()
    shape = char_classes(form, 12)
    flags = "".join((
        "D" if any(c.isdigit() for c in form) else "",
        "H" if "-" in form else "",
        "U" if any(c.isupper() for c in form) else "",
        "A" if form.isupper() else "",
        "T" if form[:1].isupper() else "",
    ))
    return [form, low, low[:1], low[:2], low[:3], low[:4], low[-1:], low[-2:], low[-3:],
            low[-4:], shape, flags, amb.get(low, "<unk>")]


def hash_strings(strings: Sequence[str]) -> np.ndarray:
    """crc32 of each string, salted with its column (the same string in two columns
    is two features)."""
    return np.array([zlib.crc32(f"{i}={s}".encode()) for i, s in enumerate(strings)],
                    np.int64)


class TypeCache:
    """Per-word-type feature hashes, computed once per form (bounded, thread-safe).

    The only mutable state of a loaded tagger; a lock guards it so that one
    Tagger can serve several threads.
    """

    def __init__(self, amb: dict[str, str], word_classes: WordClasses | None = None,
                 max_size: int = 200_000):
        self.lock = threading.Lock()
        self.amb = amb
        self.word_classes = word_classes
        self.width = len(TYPE_FEATURES) + (
            0 if word_classes is None else len(wordclasses.FEATURES))
        self.max_size = max_size
        self._reset()

    def _reset(self) -> None:
        self.ids: dict[str, int] = {}
        self.table = np.empty((1024, self.width), np.int64)
        for pad in PAD:
            self._add(pad, hash_strings([pad] * self.width))

    def strings(self, form: str) -> list[str]:
        out = type_strings(form, self.amb)
        if self.word_classes is not None:
            out += self.word_classes.strings(form)
        return out

    def _add(self, form: str, row: np.ndarray) -> int:
        n = len(self.ids)
        if n == self.table.shape[0]:
            self.table = np.concatenate([self.table, np.empty_like(self.table)])
        self.table[n] = row
        self.ids[form] = n
        return n

    def features(self, forms: Sequence[str]) -> np.ndarray:
        """int64 [len(forms) + 4, K] with two padding rows on each side."""
        with self.lock:
            if len(self.ids) > self.max_size:
                self._reset()
            ids = [0, 0]
            get = self.ids.get
            for f in forms:
                i = get(f)
                if i is None:
                    i = self._add(f, hash_strings(self.strings(f)))
                ids.append(i)
            ids += [1, 1]
            return self.table[ids]


def ambiguity_classes(sentences: Sequence[Sequence[Sequence[str]]], index: dict,
                      min_count: int = 5, min_share: float = 0.05) -> dict[str, str]:
    """Lowercased words seen >= min_count times -> "+"-joined ids of their classes."""
    counts: dict[str, dict[int, int]] = {}
    for s in sentences:
        for w in s:
            d = counts.setdefault(w[0].lower(), {})
            c = index[(w[1], w[2])]
            d[c] = d.get(c, 0) + 1
    out = {}
    for low, d in counts.items():
        total = sum(d.values())
        if total >= min_count:
            out[low] = "+".join(str(c) for c in sorted(d) if d[c] >= min_share * total)
    return out
