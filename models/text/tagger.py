"""Averaged linear POS tagger (passive-aggressive updates) predicting UPOS and XPOS jointly.

One class per (UPOS, XPOS) pair seen in training (102 in EWT), so the two tags
always agree. Greedy left to right, with features of the word and its
neighbours (form, lowercase, prefixes/suffixes 1-4, shape, flags, words and
suffixes at -2..+2, word bigrams) and of the two previous predicted classes; with
`word_classes`, also Brown-cluster prefixes and WordNet classes (`wordclasses`).
Features are hashed into a fixed [2**n_bits, n_classes] float32 weight matrix
(no feature dictionary); per-word-type feature hashes (crc32 of strings) are
computed once per type and cached (`tagger_features`), the rest is numba
(`_tagger_kernels`).

Training uses the dense matrix `W` (428 MB for 2**20 rows and 102 classes).
A loaded tagger keeps only its non-zero weights (`compact_weights`): ~73% of
the rows are all zero and the rest hold ~3 non-zeros on average, so rows with
more than n_classes / 8 non-zeros are kept dense in `Wc` and the others as
(class, value) pairs (`tagger_weights`); en_ewt: ~12 MB per direction instead of 428 MB, same
scores to the bit (the dense sums minus their additions of zero).

Model files: `tagger.json` (format version, classes, templates, hash, seed,
epochs, data hash), `tagger.npz` (non-zero averaged weights as sorted flat
indices, delta-coded, and float16 values; weights below `prune` are dropped) and,
beside the forward tagger only, `wordclasses.npz` (1.1 MB for en_ewt).
PA weights are small (median |w| ~0.006 on en_ewt): pruning below 0.01 keeps
~40% of them, 3.5 MB for both directions, and costs 0.0-0.05 UPOS/XPOS on dev.

Where XPOS splits UPOS into more classes, a second tagger over UPOS alone (`upos`,
saved under `upos/`) adds its score of each class's UPOS to the joint scores, a
product of experts: a thousand positional XPOS classes otherwise cost the UPOS they
share little data for (tr_imst with XPOS = UPOS|FEATS, dev UPOS 88.40 -> 89.93).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import zlib
from collections.abc import Callable, Sequence

import numpy as np

from models.text import _tagger_kernels as K
from models.text.tagger_features import (
    PAD,
    TYPE_FEATURES,
    TypeCache,
    ambiguity_classes,
    templates,
)
from models.text.tagger_weights import compact_weights, nonzero_weights
from models.text.wordclasses import WordClasses

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1


# Training holds two dense float32 [rows, classes] matrices: at most this many cells
# each (1 GB for the pair), so a tagset of a thousand classes (positional XPOS) does
# not take 4 GB and more.
MAX_CELLS = 1 << 27


def auto_bits(n_words: int, n_classes: int = 1, max_cells: int = MAX_CELLS) -> int:
    """log2 of the feature rows for a training set of n_words: about 8 rows per word,
    between 2**16 and 2**20 (en_ewt, 205k words, gets 2**20), and fewer where
    n_classes would pass `max_cells` (981 classes on tr_imst's 37k words: 2**19 -> 2**17,
    dev UPOS 88.56 -> 88.40, peak RSS 4.2 -> 1.2 GB)."""
    by_words = min(20, max(16, int(np.ceil(np.log2(max(2, n_words)))) + 3))
    by_memory = int(np.floor(np.log2(max_cells / max(1, n_classes))))
    return int(max(12, min(by_words, by_memory)))


def wants_upos(sentences: Sequence[Sequence[Sequence[str]]]) -> bool:
    """Whether `Tagger.train` adds a UPOS-only tagger by default: where the (UPOS, XPOS)
    classes outnumber the UPOS values."""
    return len({(w[1], w[2]) for s in sentences for w in s}) > \
        len({w[1] for s in sentences for w in s})


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
        if order.shape[1] < 2:            # one class (a treebank without tags): no doubt
            return order[:, 0], order[:, 0], np.full(len(scores), np.inf, np.float32)
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
                 word_classes: WordClasses | None = None, upos: Tagger | None = None):
        self.classes = list(classes)
        self.upos = None  # UPOS-only tagger whose scores add to each class's (module doc)
        if upos is not None:
            self._pair(upos)
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
        self._static, self._pairs = templates(first is not None, word_classes is not None)
        self._cache = TypeCache(self.ambiguity, word_classes)

    def _pair(self, upos: Tagger) -> None:
        """Add upos's score of each class's UPOS to this tagger's scores."""
        names = [u for u, _ in upos.classes]
        if any(u not in names for u, _ in self.classes):
            raise ValueError("the UPOS tagger lacks a UPOS of the joint classes")
        self.upos = upos
        self._upos_of = np.array([names.index(u) for u, _ in self.classes], np.int64)

    # -- tagging ---------------------------------------------------------------
    def _type_features(self, forms: Sequence[str],
                       level1: Sequence[tuple[str, str]] | None = None) -> np.ndarray:
        tf = self._cache.features(forms)
        if self.first is None:
            return tf
        if level1 is None:
            level1 = [self.first.classes[c] for c in self.first.tag_classes(forms)]
        pred = [PAD[0]] * 2 + ["|".join(c) for c in level1] + [PAD[1]] * 2
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
        if self.upos is not None:
            scores = scores + self.upos.scores(forms)[:, self._upos_of]
        return scores

    def type_strings(self, forms: Sequence[str]) -> list[list[str]]:
        """The per-word strings the features hash (`TYPE_FEATURES`, then the word
        classes'), which the neural tagger embeds."""
        return [self._cache.strings(f) for f in forms]

    def tag_classes(self, forms: Sequence[str]) -> np.ndarray:
        if not forms:
            return np.empty(0, np.int64)
        if self.backward is not None or self.upos is not None:
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
              progress: Callable[[], object] | None = None,
              upos: bool | None = None) -> Tagger:
        """Train on sentences of (form, upos, xpos, ...) tuples.

        n_bits: log2 of the hashed feature rows; None: `auto_bits` of the data's size and
        its classes (training holds two dense [2**n_bits, classes] float32 matrices, 1.5 GB
        at 20 bits for a tagset of 180 classes: a small treebank needs far fewer rows).
        word_classes: add cluster and WordNet features (`wordclasses`; not with stacking).
        bidirectional: also train a right-to-left tagger (on reversed sentences);
        tags are then the argmax of the sum of both passes' scores.
        progress: called after each epoch (of each direction).
        stack_folds > 1: two levels. A level-1 tagger is trained on all data and
        the level-2 one on features of level-1 tags of the whole sentence (left
        and right), which for training sentences come from `stack_folds`-fold
        jackknifing so that they carry test-like errors.
        upos: also train the UPOS-only tagger (module doc), with the same settings;
        None: where the (UPOS, XPOS) classes outnumber the UPOS values.
        """
        if upos is None:
            upos = wants_upos(sentences)
        if upos:
            joint = cls.train(sentences, epochs, seed, n_bits, stack_folds, bidirectional,
                              word_classes, progress, upos=False)
            joint._pair(cls.train([[(w[0], w[1], "") + tuple(w[3:]) for w in s]
                                    for s in sentences], epochs, seed, n_bits, stack_folds,
                                   bidirectional, word_classes, progress, upos=False))
            return joint
        classes = sorted({(w[1], w[2]) for s in sentences for w in s})
        if n_bits is None:
            n_bits = auto_bits(sum(len(s) for s in sentences), len(classes))
        if bidirectional:
            forward = cls.train(sentences, epochs, seed, n_bits, stack_folds,
                                word_classes=word_classes, progress=progress,
                                upos=False).compacted()
            backward = cls.train([s[::-1] for s in sentences], epochs, seed, n_bits, stack_folds,
                                 word_classes=word_classes, progress=progress,
                                 upos=False).compacted()
            forward.backward = backward
            forward.meta["bidirectional"] = True
            return forward
        first, level1 = None, None
        if stack_folds > 1:
            from models.text.jackknife import jackknife_tags

            def base(train: list) -> Tagger:
                return cls.train(train, epochs, seed, n_bits, upos=False)

            first = base(list(sentences))
            level1 = [list(zip(*t)) for t in
                      jackknife_tags(sentences, stack_folds, seed, train_fn=base)]
        index = {c: i for i, c in enumerate(classes)}
        tagger = cls(classes, n_bits, ambiguity=ambiguity_classes(sentences, index), first=first,
                     word_classes=word_classes)
        # Each sentence's type features, padded, one after the other; the feature rows
        # are hashed from them in each epoch (`K.train_epoch`), not stored.
        tf_start = np.cumsum([0] + [len(s) + 4 for s in sentences]).astype(np.int64)
        tf_all, golds = None, []
        for j, s in enumerate(sentences):
            tf = tagger._type_features([w[0] for w in s], level1[j] if level1 else None)
            if tf_all is None:
                tf_all = np.empty((tf_start[-1], tf.shape[1]), tf.dtype)
            tf_all[tf_start[j]:tf_start[j + 1]] = tf
            golds.extend(index[(w[1], w[2])] for w in s)
        gold = np.asarray(golds, np.int64)
        W = tagger.W
        U = np.zeros_like(W)
        rng = np.random.default_rng(seed)
        step = 1
        for epoch in range(epochs):
            order = rng.permutation(len(sentences)).astype(np.int64)
            step, errors = K.train_epoch(tf_all, tf_start, gold, order, tagger._static,
                                         tagger._pairs, W, U, step, tagger.mask)
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
                                                     len(self.classes)), self.word_classes,
                      None if self.upos is None else self.upos.compacted())

    # -- weights -----------------------------------------------------------------
    def nonzero_weights(self) -> tuple[np.ndarray, np.ndarray]:
        """(flat indices, increasing, into the dense [2**n_bits, n_classes] matrix;
        float32 values) of this tagger's non-zero weights, dense or compact."""
        if self.W is not None:
            flat = self.W.reshape(-1)
            nz = np.flatnonzero(flat)
            return nz, flat[nz]
        return nonzero_weights(self.row_of, self.Wc, self.sp_start, self.sp_cls, self.sp_val)

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
        header["upos"] = self.upos is not None
        header["word_classes"] = None if self.word_classes is None else self.word_classes.source
        if self.word_classes is not None and with_word_classes:
            self.word_classes.save(directory)
        with open(os.path.join(directory, "tagger.json"), "w", encoding="utf-8") as f:
            json.dump(header, f, indent=1)
        if self.first is not None:
            self.first.save(os.path.join(directory, "level1"), prune)
        if self.backward is not None:
            self.backward.save(os.path.join(directory, "backward"), prune, False)
        if self.upos is not None:
            self.upos.save(os.path.join(directory, "upos"), prune, False)

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
        upos = cls.load(os.path.join(directory, "upos"), word_classes) if h.get("upos") else None
        return cls(classes, h["n_bits"], None, meta, h["ambiguity"], first, backward,
                   compact=compact, word_classes=word_classes, upos=upos)
