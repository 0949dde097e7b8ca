"""What every graph decoder shares: the scored sentence it searches (`Scorer`), what it
returns (`Decoded`) and the budget fields several decoders take."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...decoders import Field
from ..global_features import global_score
from ..scoring import Scoring, new_memo, tree_score


@dataclass
class Decoded:
    heads: np.ndarray
    score: float
    stats: dict[str, Any] = field(default_factory=dict)
    optima: tuple | None = None  # greedy: (trees, scores, counts) of its distinct optima


@dataclass(frozen=True)
class Scorer:
    """Everything a decoder needs to score trees of one sentence."""

    order: int
    S: np.ndarray          # float64 (n+1, n+1) arc scores, -inf for pruned arcs
    allowed: np.ndarray    # bool (n+1, n+1)
    attrs: np.ndarray
    upos_prefix: np.ndarray
    weights: np.ndarray
    mask: int
    first_order: np.ndarray | None = None  # scores of the model's own first-order model
                                           # (its pruner), all arcs; None: use S
    neural: bool = False   # the analyser's arc scores are in S and first_order (greedy's
                           # confidence has a temperature for each case)
    arc_temperature: float | None = None   # greedy confidence's, as the model calibrated
                                           # it for its analyser (None: the constants)
    global_features: bool = False          # the model scores them (`global_features`:
                                           # greedy and sampling; mst and bgi do not)

    def scoring(self, S: np.ndarray | None = None, memo: tuple | None = None) -> Scoring:
        """The kernels' packed `Scoring` of this sentence: with arc scores S (default
        self.S) and the part memo `memo` (default a fresh `new_memo`)."""
        S = self.S if S is None else S
        mk, mv, mf = new_memo(S.shape[0] - 1) if memo is None else memo
        return Scoring(int(self.order), S, self.attrs, self.upos_prefix, self.weights,
                       np.uint64(self.mask), mk, mv, mf)

    def score(self, heads: np.ndarray) -> float:
        s = float(tree_score(heads, self.scoring()))
        if self.global_features:
            s += float(global_score(np.asarray(heads, np.int64), self.attrs, self.weights,
                                    self.mask))
        return s


SEED = Field("seed", "int", 0, "random seed: the same seed gives the same tree", lo=0,
             hi=2**63 - 1)
CONFIDENCE = Field("confidence", "bool", False, "per-arc confidence in the stats "
                   "(models/graph/confidence.py)")
