"""The accurate tagger: a BiLSTM over the linear tagger's word features, added to it.

The linear tagger (`tagger.py`) sees two words either side; a two-layer
bidirectional LSTM (Hochreiter & Schmidhuber 1997; as a tagger, Plank, Sogaard &
Goldberg 2016) sees the whole sentence, and GloVe vectors (`word_vectors.py`) tell
it about words the treebank never shows. Its inputs are embeddings of the same
per-word strings the linear tagger hashes (form, affixes, shape, ambiguity class,
clusters, WordNet classes) and the word's GloVe vector; its output is a
distribution over the joint (UPOS, XPOS) classes. `EnsembleTagger` adds its
log-probabilities, divided by `weight`, to the linear tagger's scores: on en_ewt
dev +0.4 UPOS and XPOS over the linear tagger (bench/RESULTS.md), at ~30 times
its cost per token, so it is the `accurate` tagger, chosen per request.

Inference is plain numpy (float32; weights stored as float16). Training is in
`neural_tagger_train.py` (JAX, training time only).
"""
from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence

import numpy as np

from models.text.tagger import ClassTagger, Tagger
from models.text.word_vectors import WordVectors

FORMAT_VERSION = 1
WEIGHTS = "neural.npz"
HEADER = "neural.json"
UNKNOWN, PAD = 0, 1          # ids of every column's vocabulary; words start at 2
StringsOf = Callable[[list[str]], list[list[str]]]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (np.tanh(0.5 * x) + 1.0)     # no overflow warnings for large |x|


def bilstm_layer(x: np.ndarray, wx: np.ndarray, wh: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One bidirectional LSTM layer over one sentence: x [T, D] -> [T, 2H].

    wx [2, D, 4H], wh [2, H, 4H], b [2, 4H] stack the forward and backward
    directions, which run in the same steps; gates are ordered i, f, o, u.
    """
    n, hidden = len(x), wh.shape[1]
    gx = np.stack([x @ wx[0] + b[0], x[::-1] @ wx[1] + b[1]])      # [2, T, 4H]
    h = np.zeros((2, 1, hidden), np.float32)
    c = np.zeros((2, hidden), np.float32)
    out = np.empty((2, n, hidden), np.float32)
    for t in range(n):
        g = gx[:, t] + np.matmul(h, wh)[:, 0]
        s = _sigmoid(g[:, :3 * hidden])
        c = s[:, hidden:2 * hidden] * c + s[:, :hidden] * np.tanh(g[:, 3 * hidden:])
        h = (s[:, 2 * hidden:] * np.tanh(c))[:, None, :]
        out[:, t] = h[:, 0]
    return np.concatenate([out[0], out[1, ::-1]], axis=1)


def bilstm_states(params: dict[str, np.ndarray], emb: Sequence[np.ndarray],
                  table: np.ndarray, ids: np.ndarray, layers: int) -> np.ndarray:
    """float32 [T, 2H]: the top BiLSTM layer's states over one sentence's `ids`
    (`NeuralTagger.ids`): column embeddings `emb` and the projected word vector
    (`table` rows, `params["proj"]`), then `layers` BiLSTM layers."""
    x = np.concatenate([e[ids[:, c]] for c, e in enumerate(emb)]
                       + [table[ids[:, -1]] @ params["proj"]], axis=1)
    for layer in range(layers):
        x = bilstm_layer(x, params[f"wx{layer}"], params[f"wh{layer}"], params[f"b{layer}"])
    return x


def log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


class NeuralTagger:
    """BiLSTM tagger; `log_probs(forms, strings_of)` -> [T, classes] log-probabilities.

    vocab: per type-string column, the strings with an embedding (id = position + 2).
    params: "emb{c}" [V_c + 2, d_c], "proj" [vector dims, P], "wx{l}" [2, D_l, 4H],
    "wh{l}" [2, H, 4H], "b{l}" [2, 4H], "wo" [2H, classes], "bo" [classes].
    """

    def __init__(self, classes: Sequence[tuple[str, str]], vocab: Sequence[Sequence[str]],
                 params: dict[str, np.ndarray], vectors: WordVectors, meta: dict | None = None):
        self.classes = [tuple(c) for c in classes]
        self.vocab = [list(v) for v in vocab]
        self.index = [{s: i + 2 for i, s in enumerate(v)} for v in self.vocab]
        self.params = {k: np.asarray(v, np.float32) for k, v in params.items()}
        self.vectors = vectors
        self.meta = dict(meta or {})
        self.layers = sum(1 for k in self.params if k.startswith("wh"))
        self._emb = [self.params.get(f"emb{c}") for c in range(len(self.vocab))]
        self._ids: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def ids(self, forms: Sequence[str], strings_of: StringsOf) -> np.ndarray:
        """int64 [T, columns + 1]: vocabulary ids of each word's strings (`strings_of`
        a list of forms, called for forms not yet cached), then its row in the word
        vectors."""
        out = np.empty((len(forms), len(self.index) + 1), np.int64)
        missing = []
        for i, f in enumerate(forms):
            row = self._ids.get(f)
            if row is None:
                missing.append(i)
            else:
                out[i] = row
        if missing:
            new = [forms[i] for i in missing]
            rows, strings = self.vectors.rows(new), strings_of(new)
            with self._lock:
                if len(self._ids) > 200_000:
                    self._ids = {}
                for i, r, st in zip(missing, rows, strings):
                    row = np.array([ix.get(s, UNKNOWN) for ix, s in zip(self.index, st)]
                                   + [r], np.int64)
                    self._ids[forms[i]] = row
                    out[i] = row
        return out

    def log_probs_of_ids(self, ids: np.ndarray) -> np.ndarray:
        """float32 [T, classes] log-probabilities of one sentence's `ids`."""
        x = bilstm_states(self.params, self._emb, self.vectors.table, ids, self.layers)
        return log_softmax(x @ self.params["wo"] + self.params["bo"])

    def log_probs(self, forms: Sequence[str], strings_of: StringsOf) -> np.ndarray:
        if not len(forms):
            return np.zeros((0, len(self.classes)), np.float32)
        return self.log_probs_of_ids(self.ids(forms, strings_of))

    # -- persistence -------------------------------------------------------------
    def save(self, directory: str) -> None:
        """float16 weights (compressed npz), vocabulary and header as JSON; the word
        vectors beside them (`word_vectors.FILE`)."""
        os.makedirs(directory, exist_ok=True)
        np.savez_compressed(os.path.join(directory, WEIGHTS),
                            **{k: v.astype(np.float16) for k, v in self.params.items()})
        header = {"format_version": FORMAT_VERSION, "classes": [list(c) for c in self.classes],
                  "vocab": self.vocab, **self.meta}
        with open(os.path.join(directory, HEADER), "w", encoding="utf-8") as f:
            json.dump(header, f, ensure_ascii=False, separators=(",", ":"))
        self.vectors.save(directory)

    @classmethod
    def load(cls, directory: str) -> NeuralTagger:
        with open(os.path.join(directory, HEADER), encoding="utf-8") as f:
            h = json.load(f)
        if h.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"neural tagger format {h.get('format_version')} "
                             f"!= {FORMAT_VERSION}")
        with np.load(os.path.join(directory, WEIGHTS), allow_pickle=False) as data:
            params = {k: data[k] for k in data.files}
        meta = {k: v for k, v in h.items() if k not in ("format_version", "classes", "vocab")}
        return cls(h["classes"], h["vocab"], params, WordVectors.load(directory), meta)


class EnsembleTagger(ClassTagger):
    """The linear tagger's scores plus the neural tagger's log-probabilities / weight:
    the same interface as `Tagger` (`tag`, `tag_classes`, `alternatives`), on the
    linear tagger's scale so that `Pipeline.choose_tags` keeps its settings."""

    def __init__(self, linear: Tagger, neural: NeuralTagger, weight: float):
        if [tuple(c) for c in linear.classes] != neural.classes:
            raise ValueError("the neural tagger was trained for other classes than the "
                             "linear tagger's")
        self.linear, self.neural, self.weight = linear, neural, float(weight)
        self.classes = linear.classes

    def scores(self, forms: Sequence[str]) -> np.ndarray:
        """float32 [T, classes]."""
        forms = list(forms)
        lin = self.linear.scores(forms)
        return lin + self.neural.log_probs(forms, self.linear.type_strings) / self.weight

    def tag_classes(self, forms: Sequence[str]) -> np.ndarray:
        if not len(forms):
            return np.empty(0, np.int64)
        return np.argmax(self.scores(forms), axis=1)
