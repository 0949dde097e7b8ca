"""The neural analyser's forward pass in numpy: characters and words in; tags, FEATS,
arc and relation scores out.

Each word is a learnt embedding of its lowercase form (`vocab.py`), a convolution
over its characters, max-pooled (Ma & Hovy 2016, Section 2.1), embeddings of its
affixes and shape, and optionally a pretrained vector, projected; nothing depends on
the language. A stack of
bidirectional LSTMs reads the sentence. On top of it, softmax layers predict the
(UPOS, XPOS) class and FEATS of each word, and the biaffine classifiers of Dozat &
Manning (2017, Sections 2.2-2.3) score every head of every word and the relation of
an arc. The graph decoders add the arc log-probabilities to their own scores
(`GraphModel.scorer`), so every decoder, first-order included, uses them.

Weights are stored as float16, and the large matrices as int8 with one float32 scale
per row (`save`: -0.02 UAS and LAS on en_ewt dev, 9.4 -> 5 MB); the JAX training
(`train.py`) computes the same function, which the tests check. A word's input row depends on its form only,
so it is computed once per form and cached.
"""
from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from models.contextual.features import ContextualFeatures
from models.contextual.source import EncoderSpec
from models.errors import ModelError
from models.neural.stored import HEADER, dequantize, quantize, vectors_dir
from models.neural.vocab import Lookup, Vocab
from models.text.word_vectors import WordVectors

FORMAT_VERSION = 2       # 2: int8 matrices, vectors possibly in a sibling analyser's dir
READS = (1, 2)
WEIGHTS = "analyser.npz"
LOGP_FLOOR = -8.0        # log-probabilities below it count as it: one unlikely arc
                         # must not veto a tree the graph model likes
CACHE_FORMS = 200_000
RECENT = 64              # analyses kept: the tagger, arcs and relations of one sentence
                         # (and the sentences of a job analysed ahead) share one


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (np.tanh(0.5 * x) + 1.0)     # no overflow warnings for large |x|


def log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def char_features(emb: np.ndarray, conv: np.ndarray, bias: np.ndarray,
                  ids: np.ndarray) -> np.ndarray:
    """float32 [U, F]: tanh of the max over positions of a width-k convolution over the
    characters `ids` [U, L] (BOW, chars, EOW, padding); windows reaching past EOW are
    left out. emb [V, d], conv [k, d, F], bias [F]."""
    k = conv.shape[0]
    x = emb[ids]                                                    # [U, L, d]
    n_out = ids.shape[1] - k + 1
    y = bias + sum(x[:, j:j + n_out] @ conv[j] for j in range(k))   # [U, n_out, F]
    last = (ids != 1).sum(1) - k                                    # last valid start
    y = np.where(np.arange(n_out)[None, :, None] <= last[:, None, None], y, -np.inf)
    return np.tanh(y.max(1))


def reverse_index(lengths: np.ndarray, steps: int) -> np.ndarray:
    """int [B, T]: position t of each sentence read backwards within its length
    (padding stays in place), its own inverse."""
    t = np.arange(steps)[None, :]
    n = np.asarray(lengths)[:, None]
    return np.where(t < n, n - 1 - t, t)


def bilstm(x: np.ndarray, lengths: np.ndarray, wx: np.ndarray, wh: np.ndarray,
           b: np.ndarray) -> np.ndarray:
    """One bidirectional LSTM layer over a padded batch x [B, T, D] -> [B, T, 2H].

    wx [2, D, 4H], wh [2, H, 4H], b [2, 4H] stack the forward and backward
    directions, which run in the same steps (the backward one over each sentence
    reversed within its length, so padding only ever follows a sentence and needs
    no mask); gates are ordered i, f, o, u."""
    batch, steps, _ = x.shape
    hidden = wh.shape[1]
    rev = reverse_index(lengths, steps)
    rows = np.arange(batch)[:, None]
    flat = x.reshape(-1, x.shape[-1])            # one 2-D product per direction: numpy
    back = x[rows, rev].reshape(flat.shape)       # runs [B, T, D] @ [D, 4H] as B of them
    gx = np.stack([flat @ wx[0] + b[0], back @ wx[1] + b[1]]).reshape(
        2, batch, steps, -1)                                         # [2, B, T, 4H]
    h = np.zeros((2, batch, hidden), np.float32)
    c = np.zeros((2, batch, hidden), np.float32)
    out = np.empty((2, batch, steps, hidden), np.float32)
    for t in range(steps):
        g = gx[:, :, t] + np.matmul(h, wh)
        s = sigmoid(g[..., :3 * hidden])
        c = s[..., hidden:2 * hidden] * c + s[..., :hidden] * np.tanh(g[..., 3 * hidden:])
        h = s[..., 2 * hidden:] * np.tanh(c)
        out[:, :, t] = h
    return np.concatenate([out[0], out[1][rows, rev]], axis=-1)


def _similar_lengths(sentences: list, slack: float = 1.5) -> list[list]:
    """Sentences sorted by length, cut into runs whose longest is at most `slack` times
    their shortest (+ 4), so a batch pads little."""
    groups: list[list] = []
    for s in sentences:
        if groups and len(s) <= slack * len(groups[-1][0]) + 4:
            groups[-1].append(s)
        else:
            groups.append([s])
    return groups


@dataclass
class Analysis:
    """One sentence of n words as the analyser sees it.

    tag_logp [n, classes], feats_logp [n, feats]: log-probabilities;
    arc_logp [n + 1, n + 1] (head, dependent): log P(head | dependent), column 0 and
    self-arcs -inf; lab_head [n + 1, L], lab_dep [n, L]: the relation classifier's
    views of each word as a head (row 0 the root) and as a dependent."""

    tag_logp: np.ndarray
    feats_logp: np.ndarray
    arc_logp: np.ndarray
    lab_head: np.ndarray
    lab_dep: np.ndarray


class NeuralAnalyser:
    """`analyze(forms)` -> `Analysis`; `label_logp(analysis, heads)` -> [n, labels].

    params: "word_emb" [Vw, dw], "char_emb" [Vc, dc], "char_conv" [k, dc, F],
    "char_b" [F], per affix column c "affix{c}" [V_c + 1, da], optionally "vec_proj"
    [vector dims, dv]; per layer l "wx{l}",
    "wh{l}", "b{l}" (`bilstm`); "tag_w", "tag_b", "feats_w", "feats_b" (softmax
    layers); "root" [2H] (the root's state); "arc_hw", "arc_hb", "arc_dw", "arc_db"
    (ReLU layers to A), "arc_U" [A, A], "arc_u" [A]: s(h, d) = dep_d U head_h + head_h u;
    "lab_hw", "lab_hb", "lab_dw", "lab_db" (ReLU layers to L), "lab_U" [R, L, L],
    "lab_Wh" [L, R], "lab_Wd" [L, R], "lab_b" [R]: s_r(h, d) = dep_d U_r head_h +
    head_h Wh_r + dep_d Wd_r + b_r.
    """

    def __init__(self, vocab: Vocab, params: dict[str, np.ndarray],
                 vectors: WordVectors | None = None, meta: dict | None = None,
                 context: ContextualFeatures | None = None):
        self.vocab = vocab
        self.lookup = Lookup(vocab)
        self.params = {k: np.asarray(v, np.float32) for k, v in params.items()}
        if ("vec_proj" in self.params) != (vectors is not None):
            raise ModelError("the analyser's weights and its word vectors do not match")
        if ("ctx_proj" in self.params) != (context is not None):
            raise ModelError("the analyser's weights and its contextual encoder do not match")
        self.vectors = vectors
        self.context = context
        if context is not None:        # the scalar mix folded into one [L, H] weighting
            p = self.params
            w = np.exp(p["ctx_mix"] - p["ctx_mix"].max())
            self._mix = (p["ctx_scale"] * w / w.sum()).astype(np.float32)
        self.meta = dict(meta or {})
        self.layers = sum(1 for k in self.params if k.startswith("wh"))
        U = self.params["lab_U"]                                          # [R, L, L]
        self._lab_U = np.ascontiguousarray(U.transpose(1, 0, 2).reshape(U.shape[1], -1))
        self._rows: dict[str, np.ndarray] = {}
        self._recent: OrderedDict[tuple[str, ...], Analysis] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def labels(self) -> tuple[str, ...]:
        return self.vocab.labels

    # -- inputs ------------------------------------------------------------------
    def input_rows(self, forms: Sequence[str]) -> np.ndarray:
        """float32 [n, D]: each word's input row (cached by form)."""
        rows = [self._rows.get(f) for f in forms]
        missing = sorted({f for f, r in zip(forms, rows) if r is None})
        if missing:
            new = self._compute_rows(missing)
            with self._lock:
                if len(self._rows) > CACHE_FORMS:
                    self._rows = {}
                self._rows.update(zip(missing, new))
            got = dict(zip(missing, new))
            rows = [got[f] if r is None else r for f, r in zip(forms, rows)]
        return np.stack(rows) if rows else np.zeros((0, self.input_dim), np.float32)

    @property
    def input_dim(self) -> int:
        """The width of `input_rows` (the contextual part is not in it)."""
        p = self.params
        return p["wx0"].shape[1] - (0 if self.context is None else p["ctx_proj"].shape[1])

    def context_rows(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """float32 [n_i, context_dim] per sentence: the projected mix of the encoder's
        states of its words (none without an encoder)."""
        if self.context is None:
            return [np.zeros((len(s), 0), np.float32) for s in sentences]
        proj = self.params["ctx_proj"]
        states = self.context.sentences([list(s) for s in sentences])
        return [np.einsum("nlh,l->nh", x, self._mix) @ proj for x in states]

    def _compute_rows(self, forms: Sequence[str]) -> np.ndarray:
        p, look = self.params, self.lookup
        parts = [p["word_emb"][[look.word_id(f) for f in forms]],
                 char_features(p["char_emb"], p["char_conv"], p["char_b"],
                               np.stack([look.char_ids(f) for f in forms]))]
        if self.vocab.affixes:
            ids = np.stack([look.affix_ids(f) for f in forms])
            parts += [p[f"affix{c}"][ids[:, c]] for c in range(ids.shape[1])]
        if self.vectors is not None:
            parts.append(self.vectors.table[self.vectors.rows(forms)] @ p["vec_proj"])
        return np.concatenate(parts, axis=1).astype(np.float32)

    # -- forward -------------------------------------------------------------------
    def states(self, sentences: Sequence[Sequence[str]],
               context: Sequence[np.ndarray] | None = None) -> list[np.ndarray]:
        """The top BiLSTM layer's states [n_i, 2H] of each sentence, run as one batch;
        `context`: their `context_rows`, when computed already."""
        lengths = np.array([len(s) for s in sentences])
        steps = int(lengths.max())
        if context is None:
            context = self.context_rows(sentences)
        x = np.zeros((len(sentences), steps, self.params["wx0"].shape[1]), np.float32)
        for i, s in enumerate(sentences):
            x[i, :len(s)] = np.concatenate([self.input_rows(s), context[i]], axis=1)
        p = self.params
        for layer in range(self.layers):
            x = bilstm(x, lengths, p[f"wx{layer}"], p[f"wh{layer}"], p[f"b{layer}"])
        return [x[i, :n] for i, n in enumerate(lengths)]

    def held(self, sentences: Sequence[Sequence[str]]) -> list[bool]:
        """Whether each sentence's analysis is among the `RECENT` ones (an
        `analyze_batch` would not run it again)."""
        with self._lock:
            return [tuple(s) in self._recent for s in sentences]

    def analyze_batch(self, sentences: Sequence[Sequence[str]]) -> list[Analysis]:
        """`Analysis` of each sentence (each at least one word), the ones not among
        the `RECENT` last analysed run as one batch."""
        keys = [tuple(s) for s in sentences]
        with self._lock:
            got = {k: self._recent[k] for k in keys if k in self._recent}
        todo = sorted(dict.fromkeys(k for k in keys if k not in got), key=len)
        if todo:
            new = []
            # the encoder batches by length itself, over all of them at once
            ctx = dict(zip(todo, self.context_rows(todo))) if self.context else None
            for group in _similar_lengths(todo):      # little padding in each batch
                rows = None if ctx is None else [ctx[k] for k in group]
                new += [self._heads(x) for x in self.states(group, rows)]
            got.update(zip(todo, new))
            with self._lock:
                for k, a in zip(todo, new):
                    self._recent[k] = a
                while len(self._recent) > RECENT:
                    self._recent.popitem(last=False)
        return [got[k] for k in keys]

    def analyze(self, forms: Sequence[str]) -> Analysis:
        return self.analyze_batch([forms])[0]

    def _heads(self, x: np.ndarray) -> Analysis:
        p = self.params
        n = x.shape[0]
        full = np.concatenate([p["root"][None, :], x])                   # [n + 1, 2H]
        head = np.maximum(full @ p["arc_hw"] + p["arc_hb"], 0.0)
        dep = np.maximum(x @ p["arc_dw"] + p["arc_db"], 0.0)
        s = (dep @ p["arc_U"]) @ head.T + (head @ p["arc_u"])[None, :]  # [n, n + 1]
        s[np.arange(n), np.arange(1, n + 1)] = -np.inf
        arc = np.full((n + 1, n + 1), -np.inf, np.float32)
        arc[:, 1:] = log_softmax(s).T
        return Analysis(
            tag_logp=log_softmax(x @ p["tag_w"] + p["tag_b"]),
            feats_logp=log_softmax(x @ p["feats_w"] + p["feats_b"]),
            arc_logp=arc,
            lab_head=np.maximum(full @ p["lab_hw"] + p["lab_hb"], 0.0),
            lab_dep=np.maximum(x @ p["lab_dw"] + p["lab_db"], 0.0))

    def label_logp(self, a: Analysis, heads: Sequence[int] | np.ndarray) -> np.ndarray:
        """float32 [n, labels]: log P(relation | arc heads[d] -> d) for words d = 1..n
        (heads[i] is the head of word i + 1, 0 for the root)."""
        p = self.params
        hh = a.lab_head[np.asarray(heads)]                                # [n, L]
        n, width = hh.shape
        # dep_d U_r head_d for every r as two matmuls (3x faster than the einsum)
        s = np.matmul((a.lab_dep @ self._lab_U).reshape(n, -1, width), hh[:, :, None])[..., 0]
        return log_softmax(s + hh @ p["lab_Wh"] + a.lab_dep @ p["lab_Wd"] + p["lab_b"])

    @staticmethod
    def arc_bonus(a: Analysis, weight: float) -> np.ndarray:
        """float64 [n + 1, n + 1]: weight x max(log P(head | dep), LOGP_FLOOR) per arc,
        0 where there is no arc; added to the graph model's arc scores."""
        lp = a.arc_logp.astype(np.float64)
        return np.where(np.isfinite(lp), weight * np.maximum(lp, LOGP_FLOOR), 0.0)

    @staticmethod
    def arc_probs(a: Analysis) -> np.ndarray:
        """float64 [n + 1, n + 1] (head, dependent): P(head | dependent), 0 where there is
        no arc; what the transition parser weighs its moves by."""
        return np.exp(np.ascontiguousarray(a.arc_logp, dtype=np.float64))   # exp(-inf) = 0

    # -- persistence -------------------------------------------------------------
    def save(self, directory: str) -> None:
        """The weights (compressed npz: `quantize`), a JSON header with the vocabulary
        and, with pretrained vectors, `vectors.npz` beside them (`share_vectors` may
        then point the header at a sibling analyser's identical copy)."""
        os.makedirs(directory, exist_ok=True)
        np.savez_compressed(os.path.join(directory, WEIGHTS), **quantize(self.params))
        header = {"format_version": FORMAT_VERSION, "vocab": self.vocab.to_json(),
                  "vectors": self.vectors is not None, **self.meta}
        if self.context is not None:
            header["encoder"] = self.context.spec.to_json()
        with open(os.path.join(directory, HEADER), "w", encoding="utf-8") as f:
            json.dump(header, f, ensure_ascii=False, separators=(",", ":"))
        if self.vectors is not None:
            self.vectors.save(directory)

    @classmethod
    def load(cls, directory: str) -> NeuralAnalyser:
        try:
            with open(os.path.join(directory, HEADER), encoding="utf-8") as f:
                h = json.load(f)
        except FileNotFoundError as exc:
            raise ModelError(f"no neural analyser in {directory}: {exc.filename} is "
                             "missing") from exc
        if h.get("format_version") not in READS:
            raise ModelError(f"the neural analyser in {directory} has format "
                             f"{h.get('format_version')}, this code reads {READS}")
        try:
            with np.load(os.path.join(directory, WEIGHTS), allow_pickle=False) as data:
                params = dequantize({k: data[k] for k in data.files})
            vectors = WordVectors.load(vectors_dir(directory, h)) if h.get("vectors") else None
            context = (ContextualFeatures(EncoderSpec.from_json(h["encoder"]))
                       if h.get("encoder") else None)
        except FileNotFoundError as exc:
            raise ModelError(f"the neural analyser in {directory} is incomplete: "
                             f"{exc.filename} is missing") from exc
        meta = {k: v for k, v in h.items()
                if k not in ("format_version", "vocab", "vectors", "encoder")}
        return cls(Vocab.from_json(h["vocab"]), params, vectors, meta, context)
