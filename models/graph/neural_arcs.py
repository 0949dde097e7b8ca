"""Tag-free neural arc scores: a BiLSTM + biaffine first-order head classifier.

The linear graph model scores arcs from tags, so a wrong tag moves its arcs; this
model never sees tags. A two-layer BiLSTM over the same per-word inputs as the
accurate tagger (its vocabulary, word vectors and id cache, `text/neural_tagger.py`)
feeds a biaffine head classifier (Dozat & Manning 2017, Section 2.2): P(head | dep)
by a softmax over the sentence's words and the root. `arc_bonus` turns it into
additive arc scores for the graph decoders; on en_ewt dev it closes most of the
parser's gap between gold and predicted tags (bench/RESULTS.md).

Inference is plain numpy; training is in `neural_arcs_train.py` (JAX).
"""
from __future__ import annotations

import json
import os
from collections.abc import Sequence

import numpy as np

from models.text.neural_tagger import NeuralTagger, StringsOf, bilstm_states, log_softmax

FORMAT_VERSION = 1
WEIGHTS = "arcs.npz"
HEADER = "arcs.json"
LOGP_FLOOR = -8.0        # log-probabilities below it count as it: one unlikely arc
                         # must not veto a tree the graph model likes


class NeuralArcScorer:
    """`log_probs(forms, strings_of)` -> [n + 1, n + 1], entry [h, d] = log P(head h | d).

    inputs: the accurate tagger whose vocabulary, word vectors and id cache it
    shares. params: the encoder's ("emb{c}", "proj", "wx{l}", "wh{l}", "b{l}",
    shapes as `NeuralTagger`), "root" [2H] (the root's state), "head_w" [2H, A],
    "head_b" [A], "dep_w" [2H, A], "dep_b" [A] (the two ReLU layers), "U" [A, A], "u" [A]
    (biaffine: s(h, d) = dep_d U head_h + head_h u).
    """

    def __init__(self, inputs: NeuralTagger, params: dict[str, np.ndarray],
                 meta: dict | None = None):
        self.inputs = inputs
        self.params = {k: np.asarray(v, np.float32) for k, v in params.items()}
        self.meta = dict(meta or {})
        self.layers = sum(1 for k in self.params if k.startswith("wx"))
        self._emb = [self.params[f"emb{c}"] for c in range(len(inputs.vocab))]

    def log_probs_of_ids(self, ids: np.ndarray) -> np.ndarray:
        """float32 [n + 1, n + 1] (head, dependent) of one sentence's `ids`; column 0
        (the root as a dependent) and self-arcs are -inf."""
        p = self.params
        n = len(ids)
        x = bilstm_states(p, self._emb, self.inputs.vectors.table, ids, self.layers)
        states = np.concatenate([p["root"][None, :], x])                 # [n + 1, 2H]
        head = np.maximum(states @ p["head_w"] + p["head_b"], 0.0)
        dep = np.maximum(x @ p["dep_w"] + p["dep_b"], 0.0)
        s = (dep @ p["U"]) @ head.T + (head @ p["u"])[None, :]          # [n, n + 1]
        s[np.arange(n), np.arange(1, n + 1)] = -np.inf
        out = np.full((n + 1, n + 1), -np.inf, np.float32)
        out[:, 1:] = log_softmax(s).T
        return out

    def log_probs(self, forms: Sequence[str], strings_of: StringsOf) -> np.ndarray:
        return self.log_probs_of_ids(self.inputs.ids(list(forms), strings_of))

    def arc_bonus(self, forms: Sequence[str], strings_of: StringsOf, weight: float
                  ) -> np.ndarray:
        """float64 [n + 1, n + 1]: weight x max(log P(head | dep), LOGP_FLOOR) per arc,
        0 where there is no arc; added to the graph model's arc scores."""
        lp = self.log_probs(forms, strings_of).astype(np.float64)
        return np.where(np.isfinite(lp), weight * np.maximum(lp, LOGP_FLOOR), 0.0)

    # -- persistence -------------------------------------------------------------
    def save(self, directory: str) -> None:
        """float16 weights (compressed npz) and a JSON header; the inputs (vocabulary,
        word vectors) stay with the accurate tagger."""
        os.makedirs(directory, exist_ok=True)
        np.savez_compressed(os.path.join(directory, WEIGHTS),
                            **{k: v.astype(np.float16) for k, v in self.params.items()})
        header = {"format_version": FORMAT_VERSION, "columns": len(self.inputs.vocab),
                  "vocab_sizes": [len(v) for v in self.inputs.vocab], **self.meta}
        with open(os.path.join(directory, HEADER), "w", encoding="utf-8") as f:
            json.dump(header, f, indent=1)

    @classmethod
    def load(cls, directory: str, inputs: NeuralTagger) -> NeuralArcScorer:
        with open(os.path.join(directory, HEADER), encoding="utf-8") as f:
            h = json.load(f)
        if h.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"neural arc scorer format {h.get('format_version')} "
                             f"!= {FORMAT_VERSION}")
        if h.get("vocab_sizes") != [len(v) for v in inputs.vocab]:
            raise ValueError("the neural arc scorer was trained over another vocabulary "
                             "than this accurate tagger's")
        with np.load(os.path.join(directory, WEIGHTS), allow_pickle=False) as data:
            params = {k: data[k] for k in data.files}
        meta = {k: v for k, v in h.items() if k not in ("format_version",)}
        return cls(inputs, params, meta)
