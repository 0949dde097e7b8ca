"""The graph-based parser model: weights, metadata, load/save and parse.

A model directory holds `model.json` (format version, feature set, order,
label set, pruning settings, training command and data hash) and
`weights.npz` (sparse float16 weight vectors of the main model, the first-order
pruner and the labeler) and, for a model trained with word clusters,
`wordclasses.npz` (`models.text.wordclasses`). A model with the low-rank tensor
component (`tensor`) keeps its matrices in `weights.npz` too. Nothing is pickled.
"""
from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..decoder_registry import GRAPH_DECODERS
from ..decoders import Budget, BudgetError, find
from ..errors import ModelError
from ..npz import read_npz, save_npz
from ..relation_rules import best_relations, breaks_limits, rule_masks
from ..text.wordclasses import WordClasses
from .decode_mst import decode_mst
from .decoders import Decoded, Scorer
from .encode import EncodedSentence, encode
from .features import FEATURE_SET
from .global_features import GLOBAL_FEATURE_SET
from .labeler import LABEL_FEATURE_SET, label_scores, predict_labels
from .prune import all_arcs, prune
from .scoring import arc_scores
from .tensor import TENSOR_FEATURE_SET, TensorArcs
from .weights_io import from_sparse, to_sparse

FORMAT_VERSION = 2


@dataclass
class ParsedSentence:
    heads: list[int]          # heads[i] for words 1..n (list index 0 = word 1)
    deprels: list[str]
    score: float
    stats: dict[str, Any]


@dataclass
class GraphModel:
    order: int
    weights: np.ndarray                 # float32, power-of-two size
    labels: list[str]
    label_weights: np.ndarray
    pruner: np.ndarray | None = None    # first-order weights used for pruning
    prune_threshold: float = 0.005
    prune_max_heads: int = 20
    prune_temperature: float = 1.0      # pruner scores are divided by it before softmax
    meta: dict[str, Any] = field(default_factory=dict)
    save_rel: float = 0.5               # drop weights below save_rel * median |w| when saving
    word_classes: WordClasses | None = None  # Brown clusters of the A_CLASS column
    word_classes_at: str = ""           # saved as a reference to this directory (relative
                                        # to the model's), e.g. the front-end tagger's
    tensor: TensorArcs | None = None    # low-rank tensor arc scores (Lei et al. 2014)
    global_features: bool = False       # scores `global_features` (greedy, sampling)

    @property
    def mask(self) -> int:
        return self.weights.shape[0] - 1

    @property
    def version(self) -> str:
        return str(self.meta.get("version", "dev"))

    # ---- scoring -------------------------------------------------------------
    def first_order_scores(self, enc: EncodedSentence) -> np.ndarray | None:
        """All-arc scores of the pruning first-order model (None without one)."""
        if self.pruner is None:
            return None
        return arc_scores(enc.attrs, enc.upos_prefix, self.pruner,
                          np.uint64(self.pruner.shape[0] - 1), all_arcs(enc.n))

    def first_order_best(self, enc: EncodedSentence, allowed: np.ndarray | None = None
                         ) -> tuple[float, np.ndarray] | None:
        """(score of the first-order MST under the pruning model, the arcs pruning keeps)
        or None without a pruner: a cheap measure of how well a tagging suits the parser
        (`Pipeline.choose_tags`). With `allowed` (another tagging's kept arcs) only
        those arcs are scored, ~6 per word instead of all n."""
        if self.pruner is None:
            return None
        if allowed is None:
            S1 = self.first_order_scores(enc)
            allowed = self.allowed_arcs(enc, S1)
            S1 = np.where(allowed, S1, -np.inf)
        else:
            S1 = arc_scores(enc.attrs, enc.upos_prefix, self.pruner,
                            np.uint64(self.pruner.shape[0] - 1), allowed)
        heads = decode_mst(S1)
        return float(S1[heads[1:], np.arange(1, heads.shape[0])].sum()), allowed

    def allowed_arcs(self, enc: EncodedSentence, S1: np.ndarray | None = None) -> np.ndarray:
        """Arcs kept by first-order pruning (all arcs for a first-order model)."""
        if self.pruner is None:
            return all_arcs(enc.n)
        if S1 is None:
            S1 = self.first_order_scores(enc)
        return prune(S1 / self.prune_temperature, self.prune_threshold, self.prune_max_heads)

    def scorer(self, enc: EncodedSentence, allowed: np.ndarray | None = None,
               arc_bonus: np.ndarray | None = None,
               extra_arcs: np.ndarray | None = None,
               arc_temperature: float | None = None) -> Scorer:
        """The decoders' view of a sentence. arc_bonus [n + 1, n + 1] (head, dependent),
        e.g. the neural analyser's arc scores (`neural/network.py`), is added to every
        arc score, first-order included; extra_arcs (bool, same shape) are kept beside
        those pruning keeps (the arcs the analyser finds likely: a weak pruner must not
        hide them); arc_temperature: greedy confidence's with arc_bonus (`Scorer`)."""
        S1 = self.first_order_scores(enc)
        if allowed is None:
            allowed = self.allowed_arcs(enc, S1)
        if extra_arcs is not None:
            allowed = allowed | extra_arcs
            allowed[:, 0] = False
            np.fill_diagonal(allowed, False)
        S = arc_scores(enc.attrs, enc.upos_prefix, self.weights, np.uint64(self.mask), allowed)
        if self.tensor is not None:
            self.tensor.add_scores(enc.attrs, allowed, S)
        if arc_bonus is not None:
            S = np.where(allowed, S + arc_bonus, S)
            if S1 is not None:
                S1 = S1 + arc_bonus
        return Scorer(self.order, S, allowed, enc.attrs, enc.upos_prefix, self.weights,
                      self.mask, first_order=S1, neural=arc_bonus is not None,
                      arc_temperature=arc_temperature if arc_bonus is not None else None,
                      global_features=self.global_features)

    def label(self, enc: EncodedSentence, heads: np.ndarray) -> list[str]:
        """The labeler's relation of each arc of the tree heads (heads[0] = -1), within
        UD's one subject and one object a head (`relation_rules`)."""
        root = self.labels.index("root")
        ids = predict_labels(enc.attrs, heads, self.label_weights,
                             np.uint64(self.label_weights.shape[0] - 1), len(self.labels),
                             root)[1:]
        masks = rule_masks(tuple(self.labels))
        if breaks_limits(ids, heads[1:], *masks):    # two subjects or objects of one head
            scores = self.label_scores(enc, heads)
            scores[:, root] = -np.inf
            ids = np.where(heads[1:] == 0, root, best_relations(scores, heads[1:], *masks))
        return [self.labels[i] for i in ids]

    def label_scores(self, enc: EncodedSentence, heads: np.ndarray) -> np.ndarray:
        """float64 [n, labels]: the labeler's score of every relation for each word's
        arc in the tree heads (heads[0] = -1), in the order of `labels`."""
        return label_scores(enc.attrs, np.asarray(heads, np.int64), self.label_weights,
                            np.uint64(self.label_weights.shape[0] - 1), len(self.labels))[1:]

    # ---- parsing -------------------------------------------------------------
    def encode(self, forms: Sequence[str], lemmas: Sequence[str] | None,
               upos: Sequence[str], xpos: Sequence[str]) -> EncodedSentence:
        """`encode` with this model's word clusters, if it has them."""
        clusters = None if self.word_classes is None else self.word_classes.clusters(forms)
        return encode(forms, lemmas, upos, xpos, clusters)

    def decode(self, enc: EncodedSentence, decoder: str = "greedy",
               budget: Budget | dict | None = None, arc_bonus: np.ndarray | None = None,
               extra_arcs: np.ndarray | None = None, partner: list[int] | None = None,
               arc_temperature: float | None = None) -> Decoded:
        """`budget`: a checked `Budget` of `decoder` (the service's), or a plain one that
        its spec checks (a library caller's); `partner`: the tree of bgi's
        `ensemble_with` decoder, when the graph model cannot run it (selectional);
        arc_temperature: see `scorer`."""
        spec = find(decoder, GRAPH_DECODERS)   # a spec takes a `Budget` of its decoder as is
        if enc.n == 0:
            raise BudgetError("a sentence needs at least one word")
        sc = self.scorer(enc, arc_bonus=arc_bonus, extra_arcs=extra_arcs,
                         arc_temperature=arc_temperature)
        if partner is not None:
            return spec(sc, budget, ensemble_heads=partner)
        return spec(sc, budget)

    def parse(self, forms: Sequence[str], upos: Sequence[str], xpos: Sequence[str],
              lemmas: Sequence[str] | None = None, decoder: str = "greedy",
              budget: dict | None = None, arc_bonus: np.ndarray | None = None,
              extra_arcs: np.ndarray | None = None, partner: list[int] | None = None
              ) -> ParsedSentence:
        """Heads and relations of one tagged sentence (arc_bonus, extra_arcs: see
        `scorer`; partner: see `decode`)."""
        t0 = time.perf_counter()
        enc = self.encode(forms, lemmas, upos, xpos)
        dec = self.decode(enc, decoder, budget, arc_bonus, extra_arcs, partner)
        deprels = self.label(enc, dec.heads)
        stats = dict(dec.stats)
        stats["seconds"] = time.perf_counter() - t0
        stats["seconds_per_token"] = stats["seconds"] / max(1, enc.n)
        return ParsedSentence([int(h) for h in dec.heads[1:]], deprels, dec.score, stats)

    # ---- files ---------------------------------------------------------------
    def save(self, directory: str | Path, extra_meta: dict | None = None) -> None:
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, np.ndarray] = {}
        for name, w, rel in (("main", self.weights, self.save_rel),
                             ("labeler", self.label_weights, 0.0),
                             ("pruner", self.pruner, self.save_rel)):
            if w is None:
                continue
            idx, vals = to_sparse(w, rel=rel)
            arrays[f"{name}_idx"] = idx
            arrays[f"{name}_val"] = vals
            arrays[f"{name}_size"] = np.array([w.shape[0]], dtype=np.int64)
        if self.tensor is not None:
            arrays.update(self.tensor.arrays())
        save_npz(d / "weights.npz", **arrays)
        if self.word_classes is not None and not self.word_classes_at:
            self.word_classes.save(str(d))
        digest = hashlib.sha256((d / "weights.npz").read_bytes()).hexdigest()[:12]
        meta = dict(self.meta)
        meta.update(extra_meta or {})
        meta.update({
            "format_version": FORMAT_VERSION, "kind": "graph", "feature_set": FEATURE_SET,
            "label_feature_set": LABEL_FEATURE_SET,
            "order": self.order, "labels": self.labels, "prune_threshold": self.prune_threshold,
            "prune_max_heads": self.prune_max_heads,
            "prune_temperature": self.prune_temperature, "has_pruner": self.pruner is not None,
            "word_classes": (self.word_classes_at or True) if self.word_classes is not None
            else False,
            "global_features": GLOBAL_FEATURE_SET if self.global_features else False,
            "tensor": False if self.tensor is None else {
                "rank": self.tensor.rank, "gamma": round(1.0 - self.tensor.lam, 6),
                "feature_set": TENSOR_FEATURE_SET},
            "version": digest,
        })
        (d / "model.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
        self.meta = meta

    @classmethod
    def load(cls, directory: str | Path, labeler: bool = True) -> GraphModel:
        """labeler=False: arcs only (label weights dropped), for a model whose labeler
        was trained with other label features and is to be retrained (`relabel`)."""
        d = Path(directory)
        try:
            meta = json.loads((d / "model.json").read_text())
            data = read_npz(d / "weights.npz")        # bounded: models/npz.py
        except FileNotFoundError as exc:
            raise ModelError(f"no graph model in {d}: {exc.filename} is missing") from exc
        except (OSError, ValueError) as exc:
            raise ModelError(f"cannot read the graph model in {d}: {exc}") from exc
        if meta.get("format_version") != FORMAT_VERSION or meta.get("feature_set") != FEATURE_SET:
            raise ModelError(
                f"model in {d} has format {meta.get('format_version')}/{meta.get('feature_set')},"
                f" this code reads {FORMAT_VERSION}/{FEATURE_SET}")
        label_set = meta.get("label_feature_set", "label-v1")
        if labeler and label_set != LABEL_FEATURE_SET:
            raise ModelError(
                f"the labeler of the model in {d} uses features {label_set}, this code "
                f"{LABEL_FEATURE_SET}: retrain it with `deptree train-graph --relabel-from {d} "
                f"--data TRAIN.conllu --out DIR`")

        def vec(name: str) -> np.ndarray | None:
            if f"{name}_idx" not in data:
                return None
            return from_sparse(int(data[f"{name}_size"][0]), data[f"{name}_idx"],
                               data[f"{name}_val"])

        tensor = None
        if meta.get("tensor"):
            if meta["tensor"].get("feature_set") != TENSOR_FEATURE_SET:
                raise ModelError(f"the tensor of the model in {d} uses features "
                                 f"{meta['tensor'].get('feature_set')}, this code "
                                 f"{TENSOR_FEATURE_SET}")
            tensor = TensorArcs.from_arrays(data, 1.0 - float(meta["tensor"]["gamma"]))
        glob = meta.get("global_features", False)
        if glob and glob != GLOBAL_FEATURE_SET:
            raise ModelError(f"the model in {d} has global features {glob}, this code "
                             f"{GLOBAL_FEATURE_SET}")
        return cls(order=int(meta["order"]), weights=vec("main"), labels=list(meta["labels"]),
                   label_weights=vec("labeler") if labeler else np.zeros(16, np.float32),
                   pruner=vec("pruner"),
                   prune_threshold=float(meta["prune_threshold"]),
                   prune_max_heads=int(meta["prune_max_heads"]),
                   prune_temperature=float(meta.get("prune_temperature", 1.0)), meta=meta,
                   word_classes=cls._load_word_classes(d, meta.get("word_classes")),
                   word_classes_at=meta["word_classes"]
                   if isinstance(meta.get("word_classes"), str) else "", tensor=tensor,
                   global_features=bool(glob))

    @staticmethod
    def _load_word_classes(d: Path, where: bool | str | None) -> WordClasses | None:
        """The clusters meta["word_classes"] names: none, its own file, or the file in
        another directory (relative to d) it shares."""
        if not where:
            return None
        if isinstance(where, str):
            d = d / where
        try:
            return WordClasses.load(str(d))
        except FileNotFoundError as exc:
            raise ModelError(f"the graph model in {d} uses word clusters, but "
                             f"{exc.filename} is missing") from exc
        except (OSError, ValueError, KeyError) as exc:
            raise ModelError(f"cannot read the word clusters of the model in {d}: {exc}") from exc
