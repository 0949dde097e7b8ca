"""Averaged linear POS tagger (passive-aggressive updates) predicting UPOS and XPOS jointly.

One class per (UPOS, XPOS) pair seen in training (102 in EWT), so the two tags
always agree. Greedy left to right, with features of the word and its
neighbours (form, lowercase, prefixes/suffixes 1-4, shape, flags, words and
suffixes at -2..+2, word bigrams) and of the two previous predicted classes; with
`word_classes`, also Brown-cluster prefixes and WordNet classes (`wordclasses`).
Features are hashed into a fixed [2**n_bits, n_classes] float32 weight matrix
(no feature dictionary); per-word-type feature hashes (crc32 of strings) are
computed once per type and cached, the rest is numba (`_tagger_kernels`).

Training uses the dense matrix `W` (428 MB for 2**20 rows and 102 classes).
A loaded tagger keeps only its non-zero weights (`compact_weights`): ~73% of
the rows are all zero and the rest hold ~3 non-zeros on average, so rows with
more than n_classes / 8 non-zeros are kept dense in `Wc` and the others as
(class, value) pairs; en_ewt: ~12 MB per direction instead of 428 MB, same
scores to the bit (the dense sums minus their additions of zero).

Model files: `tagger.json` (format version, classes, templates, hash, seed,
epochs, data hash), `tagger.npz` (non-zero averaged weights as sorted flat
indices, delta-coded, and float16 values; weights below `prune` are dropped) and,
beside the forward tagger only, `wordclasses.npz` (1.1 MB for en_ewt).
PA weights are small (median |w| ~0.006 on en_ewt): pruning below 0.01 keeps
~40% of them, 3.5 MB for both directions, and costs 0.0-0.05 UPOS/XPOS on dev.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import zlib
from collections.abc import Callable, Sequence

import numpy as np

from models.text import _tagger_kernels as K
from models.text import wordclasses
from models.text.shape import char_classes
from models.text.wordclasses import WordClasses

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
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
_PAD = ("<s>", "</s>")
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


def _type_strings(form: str, amb: dict[str, str]) -> list[str]:
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


def compact_weights(flat: np.ndarray, values: np.ndarray, n_rows: int, n_classes: int
                    ) -> tuple[np.ndarray, ...]:
    """(row_of, Wc, sp_start, sp_cls, sp_val) of the weights W.flat[flat] = values
    (flat: strictly increasing indices into a dense [n_rows, n_classes] matrix;
    layout in `_tagger_kernels`). Rows with more than n_classes / 8 non-zeros
    are dense rows of Wc (vectorized adds), the others (class, value) pairs."""
    if n_classes > np.iinfo(np.int16).max or n_rows > np.iinfo(np.int32).max:
        raise ValueError("too many classes or rows for the compact tagger weights")
    flat = np.asarray(flat, np.int64)
    values = np.asarray(values, np.float32)
    if len(flat) and (flat[0] < 0 or flat[-1] >= n_rows * n_classes
                      or not np.all(flat[1:] > flat[:-1])):
        raise ValueError("weight indices must be increasing and inside the matrix")
    row = flat // n_classes
    cls = (flat - row * n_classes).astype(np.int16)
    starts = np.flatnonzero(np.concatenate([[True], row[1:] != row[:-1]]))
    rows = row[starts]
    del row
    counts = np.diff(np.append(starts, len(flat)))
    dense = counts * 8 > n_classes
    n_dense = int(dense.sum())
    row_of = np.full(n_rows, -1, np.int32)
    row_of[rows[dense]] = np.arange(n_dense, dtype=np.int32)
    row_of[rows[~dense]] = -2 - np.arange(len(rows) - n_dense, dtype=np.int32)
    in_dense = np.repeat(dense, counts)
    Wc = np.zeros((n_dense, n_classes), np.float32)
    Wc[np.repeat(np.arange(n_dense), counts[dense]), cls[in_dense]] = values[in_dense]
    sp_start = np.zeros(len(rows) - n_dense + 1, np.int32)
    np.cumsum(counts[~dense], out=sp_start[1:])
    return row_of, Wc, sp_start, cls[~in_dense], values[~in_dense]


def auto_bits(n_words: int) -> int:
    """log2 of the feature rows for a training set of n_words: about 8 rows per word,
    between 2**16 and 2**20 (en_ewt, 205k words, gets 2**20)."""
    return int(min(20, max(16, int(np.ceil(np.log2(max(2, n_words)))) + 3)))


def _hash_strings(strings: Sequence[str]) -> np.ndarray:
    return np.array([zlib.crc32(f"{i}={s}".encode()) for i, s in enumerate(strings)],
                    np.int64)


class _TypeCache:
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
        for pad in _PAD:
            self._add(pad, _hash_strings([pad] * self.width))

    def _strings(self, form: str) -> list[str]:
        out = _type_strings(form, self.amb)
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
                    i = self._add(f, _hash_strings(self._strings(f)))
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


class ClassTagger:
    """What a tagger with joint (UPOS, XPOS) `classes`, `scores(forms)` and
    `tag_classes(forms)` answers: the linear `Tagger` and the accurate
    `neural.tagger.AnalyserTagger` share it."""

    classes: list[tuple[str, str]]

    def scores(self, forms: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def tag_classes(self, forms: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def alternatives(self, forms: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(best class, second-best class, score margin between them) of each form: the
        tags a parser may prefer where the tagger hesitates (`Pipeline.choose_tags`)."""
        if not forms:
            e = np.empty(0, np.int64)
            return e, e, np.empty(0, np.float32)
        scores = self.scores(forms)
        order = np.argsort(-scores, axis=1, kind="stable")[:, :2]
        rows = np.arange(len(scores))
        return order[:, 0], order[:, 1], scores[rows, order[:, 0]] - scores[rows, order[:, 1]]

    def tag(self, forms: Sequence[str]) -> tuple[list[str], list[str]]:
        """UPOS and XPOS of each form (gold tokens)."""
        pairs = [self.classes[c] for c in self.tag_classes(forms)]
        return [u for u, _ in pairs], [x for _, x in pairs]


class Tagger(ClassTagger):
    """`weights`: dense [2**n_bits, n_classes] float32 (training; default zeros),
    or `compact`: the output of `compact_weights` (loaded models; `W` is None)."""

    def __init__(self, classes: list[tuple[str, str]], n_bits: int = 20,
                 weights: np.ndarray | None = None, meta: dict | None = None,
                 ambiguity: dict[str, str] | None = None, first: Tagger | None = None,
                 backward: Tagger | None = None, compact: tuple[np.ndarray, ...] | None = None,
                 word_classes: WordClasses | None = None):
        self.classes = list(classes)
        self.backward = backward  # right-to-left tagger; scores of both are added
        if backward is not None and backward.classes != self.classes:
            raise ValueError("forward and backward taggers have different classes")
        self.first = first  # level-1 tagger whose tags are features (stacking)
        if first is not None and word_classes is not None:
            raise ValueError("a stacked tagger cannot also use word classes")
        self.word_classes = word_classes  # cluster and WordNet features (`wordclasses`)
        self.ambiguity = ambiguity or {}
        self.n_bits = n_bits
        self.mask = (1 << n_bits) - 1
        if compact is not None:
            if weights is not None:
                raise ValueError("give dense weights or compact ones, not both")
            self.W = None
            self.row_of, self.Wc, self.sp_start, self.sp_cls, self.sp_val = compact
        else:
            self.W = weights if weights is not None else np.zeros(
                (1 << n_bits, len(classes)), np.float32)
            # identity map: decoding reads the dense rows (updated in place by training)
            self.row_of = np.arange(1 << n_bits, dtype=np.int32)
            self.Wc = self.W
            self.sp_start = np.zeros(1, np.int32)
            self.sp_cls = np.zeros(0, np.int16)
            self.sp_val = np.zeros(0, np.float32)
        if self.Wc.shape[1] != len(self.classes) or self.row_of.shape[0] != 1 << n_bits:
            raise ValueError("weights do not match n_bits and the classes")
        self.meta = meta or {}
        static, pairs = list(STATIC_TEMPLATES), list(PAIR_TEMPLATES)
        if first is not None:
            static, pairs = static + STACK_TEMPLATES, pairs + STACK_PAIRS
        if word_classes is not None:
            static, pairs = static + WC_TEMPLATES, pairs + WC_PAIRS
        self._static = np.array(static, np.int64)
        self._pairs = np.array(pairs, np.int64).reshape(-1, 4)
        self._cache = _TypeCache(self.ambiguity, word_classes)

    # -- tagging ---------------------------------------------------------------
    def _type_features(self, forms: Sequence[str],
                       level1: Sequence[tuple[str, str]] | None = None) -> np.ndarray:
        tf = self._cache.features(forms)
        if self.first is None:
            return tf
        if level1 is None:
            level1 = [self.first.classes[c] for c in self.first.tag_classes(forms)]
        pred = [_PAD[0]] * 2 + ["|".join(c) for c in level1] + [_PAD[1]] * 2
        col = np.array([zlib.crc32(f"pred={p}".encode()) for p in pred], np.int64)
        return np.concatenate([tf, col[:, None]], axis=1)

    def _scores(self, forms: Sequence[str]) -> np.ndarray:
        """float32 [n, n_classes]: scores of the greedy left-to-right pass."""
        tf = self._type_features(forms)
        rows = K.static_rows(tf, self._static, self._pairs, self.mask)
        return K.decode_scores(tf, rows, self.row_of, self.Wc, self.sp_start, self.sp_cls,
                               self.sp_val, self.mask)

    def scores(self, forms: Sequence[str]) -> np.ndarray:
        """float32 [n, n_classes]: the greedy pass's scores, both passes' summed when
        the tagger is bidirectional."""
        scores = self._scores(forms)
        if self.backward is not None:
            scores = scores + self.backward._scores(forms[::-1])[::-1]
        return scores

    def type_strings(self, forms: Sequence[str]) -> list[list[str]]:
        """The per-word strings the features hash (`TYPE_FEATURES`, then the word
        classes'), which the neural tagger embeds."""
        return [self._cache._strings(f) for f in forms]

    def tag_classes(self, forms: Sequence[str]) -> np.ndarray:
        if not forms:
            return np.empty(0, np.int64)
        if self.backward is not None:
            return np.argmax(self.scores(forms), axis=1)
        tf = self._type_features(forms)
        rows = K.static_rows(tf, self._static, self._pairs, self.mask)
        return K.decode(tf, rows, self.row_of, self.Wc, self.sp_start, self.sp_cls,
                        self.sp_val, self.mask)

    # -- training --------------------------------------------------------------
    @classmethod
    def train(cls, sentences: Sequence[Sequence[Sequence[str]]], epochs: int = 12,
              seed: int = 0, n_bits: int | None = None, stack_folds: int = 0,
              bidirectional: bool = False, word_classes: WordClasses | None = None,
              progress: Callable[[], object] | None = None) -> Tagger:
        """Train on sentences of (form, upos, xpos, ...) tuples.

        n_bits: log2 of the hashed feature rows; None: `auto_bits` of the data's size
        (training holds two dense [2**n_bits, classes] float32 matrices, 1.5 GB at 20
        bits for a tagset of 180 classes: a small treebank needs far fewer rows).
        word_classes: add cluster and WordNet features (`wordclasses`; not with stacking).
        bidirectional: also train a right-to-left tagger (on reversed sentences);
        tags are then the argmax of the sum of both passes' scores.
        progress: called after each epoch (of each direction).
        stack_folds > 1: two levels. A level-1 tagger is trained on all data and
        the level-2 one on features of level-1 tags of the whole sentence (left
        and right), which for training sentences come from `stack_folds`-fold
        jackknifing so that they carry test-like errors.
        """
        if n_bits is None:
            n_bits = auto_bits(sum(len(s) for s in sentences))
        if bidirectional:
            forward = cls.train(sentences, epochs, seed, n_bits, stack_folds,
                                word_classes=word_classes, progress=progress).compacted()
            backward = cls.train([s[::-1] for s in sentences], epochs, seed, n_bits, stack_folds,
                                 word_classes=word_classes, progress=progress).compacted()
            forward.backward = backward
            forward.meta["bidirectional"] = True
            return forward
        first, level1 = None, None
        if stack_folds > 1:
            from models.text.jackknife import jackknife_tags

            def base(train: list) -> Tagger:
                return cls.train(train, epochs, seed, n_bits)

            first = base(list(sentences))
            level1 = [list(zip(*t)) for t in
                      jackknife_tags(sentences, stack_folds, seed, train_fn=base)]
        classes = sorted({(w[1], w[2]) for s in sentences for w in s})
        index = {c: i for i, c in enumerate(classes)}
        tagger = cls(classes, n_bits, ambiguity=ambiguity_classes(sentences, index), first=first,
                     word_classes=word_classes)
        tfs, rows, golds = [], [], []
        for j, s in enumerate(sentences):
            tf = tagger._type_features([w[0] for w in s], level1[j] if level1 else None)
            tfs.append(tf)
            rows.append(K.static_rows(tf, tagger._static, tagger._pairs, tagger.mask))
            golds.extend(index[(w[1], w[2])] for w in s)
        tf_start = np.cumsum([0] + [len(t) for t in tfs]).astype(np.int64)
        row_start = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
        tf_all, rows_all = np.concatenate(tfs), np.concatenate(rows)
        gold = np.asarray(golds, np.int64)
        W = tagger.W
        U = np.zeros_like(W)
        rng = np.random.default_rng(seed)
        step = 1
        for epoch in range(epochs):
            order = rng.permutation(len(tfs)).astype(np.int64)
            step, errors = K.train_epoch(tf_all, tf_start, rows_all, row_start, gold, order,
                                         W, U, step, tagger.mask)
            logger.debug("tagger epoch %d: %.4f train accuracy", epoch + 1,
                         1 - errors / max(len(gold), 1))
            if progress is not None:
                progress()
        U /= step
        W -= U
        del U
        digest = hashlib.sha1("\n".join(" ".join(w[0] for w in s) for s in sentences)
                              .encode("utf-8")).hexdigest()
        tagger.meta = {"epochs": epochs, "seed": seed, "update": "passive-aggressive",
                       "n_sentences": len(sentences),
                       "data_sha1": digest, "stack_folds": stack_folds}
        return tagger

    def compacted(self) -> Tagger:
        """This tagger with its dense training weights in the compact form of a loaded
        one (`compact_weights`): the same scores, a fraction of the memory."""
        if self.W is None:
            return self
        flat, values = self.nonzero_weights()
        return Tagger(self.classes, self.n_bits, None, self.meta, self.ambiguity, self.first,
                      self.backward, compact_weights(flat, values, 1 << self.n_bits,
                                                     len(self.classes)), self.word_classes)

    # -- weights -----------------------------------------------------------------
    def nonzero_weights(self) -> tuple[np.ndarray, np.ndarray]:
        """(flat indices, increasing, into the dense [2**n_bits, n_classes] matrix;
        float32 values) of this tagger's non-zero weights, dense or compact."""
        if self.W is not None:
            flat = self.W.reshape(-1)
            nz = np.flatnonzero(flat)
            return nz, flat[nz]
        n_classes = len(self.classes)
        dense_rows = np.flatnonzero(self.row_of >= 0)
        block = self.Wc[self.row_of[dense_rows]]
        r, c = np.nonzero(block)
        sparse_rows = np.flatnonzero(self.row_of < -1)
        sparse_rows = sparse_rows[np.argsort(-2 - self.row_of[sparse_rows])]
        entry_rows = np.repeat(sparse_rows, np.diff(self.sp_start))
        flat = np.concatenate([dense_rows[r] * n_classes + c,
                               entry_rows * n_classes + self.sp_cls])
        values = np.concatenate([block[r, c], self.sp_val])
        order = np.argsort(flat, kind="stable")
        return flat[order], values[order]

    def dense_weights(self) -> np.ndarray:
        """The dense float32 [2**n_bits, n_classes] weights (a new array if compact)."""
        if self.W is not None:
            return self.W
        flat, values = self.nonzero_weights()
        W = np.zeros((1 << self.n_bits) * len(self.classes), np.float32)
        W[flat] = values
        return W.reshape(1 << self.n_bits, len(self.classes))

    # -- persistence -------------------------------------------------------------
    def save(self, directory: str, prune: float = 1e-2, with_word_classes: bool = True) -> None:
        """Write the tagger (and, unless with_word_classes is False, its word classes;
        the backward tagger shares the forward one's file)."""
        os.makedirs(directory, exist_ok=True)
        flat, values = self.nonzero_weights()
        keep = np.abs(values) >= prune
        nz = flat[keep]
        np.savez_compressed(os.path.join(directory, "tagger.npz"),
                            delta=np.diff(nz, prepend=0).astype(np.uint32),
                            value=values[keep].astype(np.float16))
        header = {"format_version": FORMAT_VERSION, "n_bits": self.n_bits,
                  "classes": [list(c) for c in self.classes], "hash": "crc32+mix64",
                  "type_features": list(TYPE_FEATURES),
                  "static_templates": self._static.tolist(),
                  "pair_templates": self._pairs.tolist(), "prune": prune, **self.meta,
                  "ambiguity": self.ambiguity}
        header["stacked"] = self.first is not None
        header["bidirectional"] = self.backward is not None
        header["word_classes"] = None if self.word_classes is None else self.word_classes.source
        if self.word_classes is not None and with_word_classes:
            self.word_classes.save(directory)
        with open(os.path.join(directory, "tagger.json"), "w", encoding="utf-8") as f:
            json.dump(header, f, indent=1)
        if self.first is not None:
            self.first.save(os.path.join(directory, "level1"), prune)
        if self.backward is not None:
            self.backward.save(os.path.join(directory, "backward"), prune, False)

    @classmethod
    def load(cls, directory: str, word_classes: WordClasses | None = None) -> Tagger:
        """word_classes: already loaded (the forward tagger's, for the backward one);
        by default read from the directory when the header names any."""
        with open(os.path.join(directory, "tagger.json"), encoding="utf-8") as f:
            h = json.load(f)
        if h.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"tagger format {h.get('format_version')} != {FORMAT_VERSION}")
        first = cls.load(os.path.join(directory, "level1")) if h["stacked"] else None
        if h.get("word_classes") is not None and word_classes is None:
            word_classes = WordClasses.load(directory)
        elif h.get("word_classes") is None:
            word_classes = None
        tagger = cls([tuple(c) for c in h["classes"]], h["n_bits"], first=first,
                     word_classes=word_classes)
        if tagger._static.tolist() != h["static_templates"] or \
                tagger._pairs.tolist() != h["pair_templates"]:
            raise ValueError("tagger templates in the model file differ from this code")
        data = np.load(os.path.join(directory, "tagger.npz"))
        classes = [tuple(c) for c in h["classes"]]
        compact = compact_weights(np.cumsum(data["delta"], dtype=np.int64),
                                  data["value"].astype(np.float32), 1 << h["n_bits"],
                                  len(classes))
        meta = {k: h[k] for k in ("epochs", "seed", "update", "n_sentences", "data_sha1",
                                  "stack_folds", "bidirectional") if k in h}
        backward = cls.load(os.path.join(directory, "backward"), word_classes) \
            if h.get("bidirectional") else None
        return cls(classes, h["n_bits"], None, meta, h["ambiguity"], first, backward,
                   compact=compact, word_classes=word_classes)
