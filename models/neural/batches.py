"""Training data of the neural analyser as arrays, packed in rows of ROW positions so
that JAX compiles two batch shapes in all."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from models.neural.jax_net import import_jax
from models.neural.vocab import MAX_CHARS, PAD, UNKNOWN, Lookup
from models.text.word_vectors import WordVectors

ROW = 128                # positions of a batch row (`Encoded.batches`)
# one word: (form, upos, xpos, feats, head, deprel)
Word = tuple[str, str, str, str, int, str]


class Encoded:
    """A treebank as arrays: per sentence the word, character and vector ids of its
    words and their gold class, FEATS, head and relation ids; with `context`, each
    sentence's encoder states [n, L, H] (float16, `contextual.features`)."""

    def __init__(self, sentences: Sequence[Sequence[Word]], lookup: Lookup,
                 vectors: WordVectors | None, context: Sequence[np.ndarray] | None = None):
        if context is not None and len(context) != len(sentences):
            raise ValueError(f"{len(context)} contextual states for {len(sentences)} "
                             "sentences")
        self.context = None if context is None else [np.asarray(c, np.float16)
                                                     for c in context]
        forms = sorted({w[0] for s in sentences for w in s})
        index = {f: i for i, f in enumerate(forms)}
        self.type_word = np.array([lookup.word_id(f) for f in forms], np.int32)
        self.type_chars = (np.stack([lookup.char_ids(f) for f in forms]) if forms
                           else np.zeros((0, MAX_CHARS + 2), np.int32))
        self.type_affixes = (np.stack([lookup.affix_ids(f) for f in forms]) if forms
                             else np.zeros((0, len(lookup.affix)), np.int32))
        self.type_vector = (vectors.rows(forms).astype(np.int32) if vectors is not None
                            else np.zeros(len(forms), np.int32))
        self.types = [np.array([index[w[0]] for w in s], np.int32) for s in sentences]
        self.gold = [np.array([[lookup.cls.get((w[1], w[2]), 0), lookup.feats.get(w[3], 0),
                                w[4], lookup.label.get(w[5], 0)] for w in s], np.int32)
                     for s in sentences]
        counts = Counter(w[0].lower() for s in sentences for w in s)
        self.type_count = np.array([counts[f.lower()] for f in forms], np.float64)

    def __len__(self) -> int:
        return len(self.types)

    def batches(self, order: Sequence[int], batch_tokens: int) -> list[list[list[int]]]:
        """Batches of rows of sentences: each row packs sentences (in `order`, first
        fit) into ROW positions, or holds one longer sentence; a batch has
        batch_tokens // ROW rows, or fewer rows of the longest length."""
        short, long_ = [], []
        for i in order:
            (short if len(self.types[i]) <= ROW else long_).append(i)
        rows: list[list[int]] = []
        free: list[int] = []
        for i in short:
            k = len(self.types[i])
            j = next((j for j in range(max(0, len(rows) - 8), len(rows)) if free[j] >= k), None)
            if j is None:
                rows.append([])
                free.append(ROW)
                j = len(rows) - 1
            rows[j].append(i)
            free[j] -= k
        per = max(1, batch_tokens // ROW)
        out = [rows[k:k + per] for k in range(0, len(rows), per)]
        if long_:
            per_long = max(1, batch_tokens // self.long_row)
            out += [[[i] for i in long_[k:k + per_long]]
                    for k in range(0, len(long_), per_long)]
        return out

    @property
    def long_row(self) -> int:
        """The row length of the batches of sentences longer than ROW."""
        longest = max((len(t) for t in self.types), default=0)
        return max(ROW, -(-longest // ROW) * ROW)

    def arrays(self, batch: Sequence[Sequence[int]], batch_tokens: int,
               rng: np.random.Generator | None, word_dropout: float) -> dict[str, np.ndarray]:
        """Padded arrays of a batch of rows, of the one shape of its kind (short rows,
        or long); gold heads as row positions + 1 (0 the root); word dropout when rng
        is given."""
        longest = max(sum(len(self.types[i]) for i in row) for row in batch)
        n = ROW if longest <= ROW else self.long_row
        size = max(1, batch_tokens // n, len(batch))
        types = np.zeros((size, n), np.int64)
        gold = np.zeros((size, n, 4), np.int32)
        seg = np.full((size, n), -1, np.int32)
        for r, row in enumerate(batch):
            at = 0
            for j, i in enumerate(row):
                k = len(self.types[i])
                types[r, at:at + k] = self.types[i]
                g = self.gold[i].copy()
                g[:, 2] = np.where(g[:, 2] > 0, g[:, 2] + at, 0)
                gold[r, at:at + k] = g
                seg[r, at:at + k] = j
                at += k
        real = seg >= 0
        words = np.where(real, self.type_word[types], PAD)
        if rng is not None and word_dropout > 0:
            f = self.type_count[types]
            words = np.where(real & (rng.random(words.shape) < word_dropout / (word_dropout + f)),
                             UNKNOWN, words)
        chars = np.where(real[..., None], self.type_chars[types], PAD)
        extra = {}
        if self.context is not None:
            ctx = np.zeros((size, n) + self.context[0].shape[1:], np.float16)
            for r, row in enumerate(batch):
                at = 0
                for i in row:
                    k = len(self.types[i])
                    ctx[r, at:at + k] = self.context[i]
                    at += k
            extra["context"] = ctx
        return {**extra, "words": words.astype(np.int32), "chars": chars.astype(np.int32),
                "affixes": self.type_affixes[types].astype(np.int32),
                "vectors": np.where(real, self.type_vector[types], 0).astype(np.int32),
                "seg": seg, "tags": gold[..., 0], "feats": gold[..., 1],
                "heads": gold[..., 2], "labels": gold[..., 3]}



def to_device(batch: dict[str, np.ndarray]) -> dict:
    _, jnp, _ = import_jax()
    return {k: jnp.asarray(v) for k, v in batch.items() if k != "types"}
