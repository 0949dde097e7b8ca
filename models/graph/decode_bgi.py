"""BGI-PP: greedy graph inference with partial-part predictions.

Tchernowitz, Yedidsion & Reichart, "Effective Greedy Inference for
Graph-based Non-Projective Dependency Parsing", EMNLP 2016.

- Algorithm 2: the tree grows one arc at a time; an available arc e scores
  v(e) = beta * loss(e) - (1 - beta) * gain(e) (see bgi_state.py for gain and
  loss over partial parts, bgi_parts.py for the parts, with arc probabilities
  p_e = softmax over heads of alpha * W_e) and the arc of minimal v is added;
  the arcs it excludes leave. Gain and loss are kept incrementally (Appendix A).
- Beam (|B| partial trees, ranked by the sum of their arcs' v; each complete
  tree is improved by the swaps, then they are compared under the full model).
- Post-search improvement (Section 6, bgi_swaps.py): rounds of the best single
  arc swap under the full model; `start` adds the first-order MST as a start.
- Ensemble (Section 7): gamma_j is added to the weight of every part of order
  j (j arcs) that lies in another decoder's tree before the search.

The beam's states are rows of stacked arrays and the whole construction is
one numba call (`beam_construct`), or one call per arc when a deadline is set
(STYLE: Python outer loop, numba inner sweep). `BGIState` / `BGIProblem.values`
/ `.add` are the same kernels on one state, used by the tests' plain-Python
beam and step-by-step checks. Pruned arcs take no part in the search; if
pruning leaves a partial tree no available arc, the best first-order arc that
keeps a valid tree is added, and a final tree that still holds a pruned arc is
replaced by the swapped first-order MST over the allowed arcs. A sentence that
starts past its deadline gets that MST alone (`_least_effort`).
"""
from __future__ import annotations

import logging
import time

import numpy as np
from numba import njit

from .bgi_parts import build_parts
from .bgi_state import (
    Parts,
    Tree,
    beam_buffers,
    beam_construct,
    beam_scratch,
    beam_start,
    beam_step,
    state_add,
    state_init,
    state_values,
)
from .bgi_swaps import improve, swap_scores, tree_score_memo
from .decode_mst import decode_mst
from .features import MAX_FEATURES
from .scoring import new_memo

logger = logging.getLogger(__name__)

# gamma_j of the ensemble for parts of 1, 2 and 3 arcs
ENSEMBLE_GAMMA = (1.0, 0.5, 0.25)
# higher-order parts whose arcs' probability product is below this are not
# built: scoring a part's features (~0.7 us) is most of BGI-PP's time
MIN_PART_PROB = 0.01
# build the parts with a first/last-child marker (they count for every child)
MARKERS = True


def arc_probs(S: np.ndarray, allowed: np.ndarray, alpha: float) -> np.ndarray:
    """p[h * n1 + m] = softmax over allowed heads h of alpha * S[h, m] (float64, (n1*n1,))."""
    n1 = S.shape[0]
    X = np.where(allowed, alpha * np.where(np.isfinite(S), S, 0.0), -np.inf)
    X[:, 0] = -np.inf
    mx = X.max(axis=0)
    mx = np.where(np.isfinite(mx), mx, 0.0)
    E = np.exp(X - mx)
    Z = E.sum(axis=0)
    P = np.divide(E, Z, out=np.zeros_like(E), where=Z > 0)
    return np.ascontiguousarray(P).reshape(n1 * n1)


class BGIState:
    """One partial tree and its incremental gain/loss bookkeeping."""

    __slots__ = (
        "Csub",
        "Din",
        "Droot",
        "G",
        "alive",
        "avail",
        "comp",
        "cost",
        "head",
        "intree",
    )

    def tree(self) -> Tree:
        """The kernels' packed view of this state (the same arrays, no copy)."""
        return Tree(self.avail, self.intree, self.alive, self.G, self.Din, self.Csub,
                    self.Droot, self.comp, self.head)

    def copy(self) -> BGIState:
        s = BGIState.__new__(BGIState)
        for k in self.__slots__:
            v = getattr(self, k)
            setattr(s, k, v.copy() if isinstance(v, np.ndarray) else v)
        return s


class BGIProblem:
    """The parts of one sentence and their (possibly ensemble-biased) weights."""

    def __init__(self, sc, alpha: float, bias_heads: np.ndarray | None = None,
                 gamma: tuple[float, float, float] | None = None,
                 min_part_prob: float = 0.0, markers: bool = True):
        n1 = sc.S.shape[0]
        self.n1 = n1
        self.allowed = np.ascontiguousarray(sc.allowed)
        self.memo = new_memo(n1 - 1)  # kept: the swaps reuse the part scores
        self.p = arc_probs(sc.S, self.allowed, alpha)
        w, parcs, arity, aptr, apart = build_parts(
            self.allowed, sc.scoring(memo=self.memo), self.p, min_part_prob, markers)
        if bias_heads is not None:
            tree = np.zeros(n1 * n1 + 1, bool)  # last slot: the -1 padding
            tree[-1] = True
            tree[bias_heads[1:] * n1 + np.arange(1, n1)] = True
            inside = tree[parcs].all(axis=1)
            gamma = ENSEMBLE_GAMMA if gamma is None else gamma
            w = w + np.where(inside, np.asarray(gamma)[arity - 1], 0.0)
        self.w, self.parcs, self.aptr, self.apart = w, parcs, aptr, apart
        self.parts = Parts(w, parcs, aptr, apart, self.p)
        Q = sc.first_order if sc.first_order is not None else sc.S
        self.fallback_scores = np.where(np.isfinite(Q), Q, -1e30)

    def initial(self) -> BGIState:
        n1 = self.n1
        s = BGIState.__new__(BGIState)
        s.avail = self.allowed.reshape(n1 * n1).copy()
        s.avail[np.arange(n1) * n1] = False  # nothing enters the root
        s.avail[np.arange(n1) * (n1 + 1)] = False
        s.intree = np.zeros(n1 * n1, bool)
        s.alive = np.ones(self.w.shape[0], bool)
        s.G = np.zeros(n1 * n1)
        s.Din = np.zeros(n1)
        s.Csub = np.zeros((n1, n1))
        s.Droot = np.zeros(1)
        s.comp = np.zeros(n1, np.int64)
        s.head = np.zeros(n1, np.int64)
        s.cost = 0.0
        # parts through an arc that can never be added are dead from the start
        pad = self.parcs < 0
        s.alive = (pad | s.avail[np.maximum(self.parcs, 0)]).all(axis=1)
        state_init(self.parts, s.tree())
        return s

    def values(self, s: BGIState, beta: float, out: np.ndarray) -> np.ndarray:
        state_values(beta, s.tree(), self.p, out)
        return out

    def add(self, s: BGIState, e: int) -> None:
        state_add(e, self.parts, s.tree())

    def fallback(self, s: BGIState) -> int:
        """Best first-order arc keeping a valid partial tree (pruned arcs included)."""
        n1 = self.n1
        root_used = bool((s.head[1:] == 0).any())
        best, arg = -np.inf, -1
        for m in range(1, n1):
            if s.head[m] != -1:
                continue
            for h in range(n1):
                if h == m or s.comp[h] == m or (h == 0 and root_used):
                    continue
                if self.fallback_scores[h, m] > best:
                    best, arg = self.fallback_scores[h, m], h * n1 + m
        return arg


def bgi_construct(prob: BGIProblem, beta: float, beam: int = 1,
                  deadline: float | None = None) -> tuple[list[np.ndarray], bool]:
    """Algorithm 2 with a beam: the complete trees of the final beam (best first
    by summed v) and whether the deadline cut the beam to 1. The beam's states
    are rows of two sets of arrays; without a deadline one `beam_construct` call
    does every step, with one a `beam_step` call per arc checks the clock between."""
    n1, P = prob.n1, prob.w.shape[0]
    if deadline is None:  # all steps in one call
        out = beam_construct(beam, beta, prob.allowed, prob.parts, prob.fallback_scores)
        return list(out), False
    cur, nxt = beam_buffers(beam, n1, P), beam_buffers(beam, n1, P)
    beam_start(prob.allowed, prob.parts, cur)
    sx = beam_scratch(beam, n1)
    nb, width, hit = 1, beam, False
    for _ in range(n1 - 1):
        if not hit and time.monotonic() > deadline:
            hit, width, nb = True, 1, 1
        nb = beam_step(nb, width, beta, prob.parts, prob.fallback_scores, cur, nxt, sx)
        cur, nxt = nxt, cur
    out = []
    for k in range(nb):
        h = cur.head[k].copy()
        h[0] = -1
        out.append(h)
    return out, hit


@njit(cache=True, _nrt=False)
def _valid_allowed(heads, allowed):
    """is_valid_tree(heads) and every arc allowed."""
    n1 = heads.shape[0]
    if n1 < 2:
        return False
    roots = 0
    for m in range(1, n1):
        h = heads[m]
        if h < 0 or h >= n1 or not allowed[h, m]:
            return False
        roots += h == 0
    if roots != 1:
        return False
    for m in range(1, n1):  # no cycle: every word reaches the root in < n1 steps
        x = m
        k = 0
        while x != 0:
            x = heads[x]
            k += 1
            if k >= n1:
                return False
    return True


def _allowed_mst(sc) -> np.ndarray | None:
    """The first-order MST over the allowed arcs, or None when they hold no tree."""
    Q = sc.first_order if sc.first_order is not None else sc.S
    alt = decode_mst(np.where(sc.allowed, Q, -np.inf))
    if _valid_allowed(alt, sc.allowed):
        return alt
    return None


def _least_effort(sc) -> tuple[np.ndarray, float] | None:
    """A sentence whose deadline passed before its search began (a late sentence of a
    job): the first-order MST over the allowed arcs and its full-model score, the tree
    the repair below falls back to; None when the allowed arcs hold no tree. Even at
    beam 1, building the parts of a 250-word sentence and its 249 construction steps
    took 2.4 s, a step a job past its deadline could not stop in (issue 61, defect 1);
    the MST takes 0.15 s."""
    alt = _allowed_mst(sc)
    if alt is None:
        return None
    memo = new_memo(sc.S.shape[0] - 1)
    score = tree_score_memo(sc, alt, memo, np.empty((1, 5), np.int64),
                            np.empty(MAX_FEATURES, np.uint64))
    return alt, score


def run_bgi(sc, beam: int, swaps: int, alpha: float, beta: float,
            bias_heads: np.ndarray | None = None, deadline: float | None = None,
            min_part_prob: float = MIN_PART_PROB, markers: bool | None = None,
            gamma: tuple[float, float, float] | None = None, start: str = "bgi"
            ) -> tuple[np.ndarray, float, dict]:
    """BGI-PP (+ beam, + swaps, + ensemble bias): heads, full-model score, stats.
    `start` says where the swaps start (Section 6 starts from the final beam, "bgi");
    not in the paper, the first-order MST over the allowed arcs as a cheap, different
    start: "max" runs one swap search, from the highest-scoring of the beam's trees and
    the MST; "both" adds the MST to the beam (one search more than "bgi")."""
    t0 = time.perf_counter()
    if deadline is not None and time.monotonic() > deadline:
        late = _least_effort(sc)
        if late is not None:
            heads, final = late
            return heads, final, {"parts": 0, "beam_best": 0, "swap_rounds": 0,
                                  "repaired": False, "deadline_hit": True,
                                  "seconds": time.perf_counter() - t0}
    prob = BGIProblem(sc, alpha, bias_heads, gamma, min_part_prob,
                      MARKERS if markers is None else markers)
    trees, hit = bgi_construct(prob, beta, beam, deadline)
    memo = prob.memo
    parts = np.empty((1, 5), np.int64)
    buf = np.empty(MAX_FEATURES, np.uint64)

    def score(t):
        return tree_score_memo(sc, t, memo, parts, buf)

    if start != "bgi":
        alt = _allowed_mst(sc)
        if alt is not None and start == "both":
            trees.append(alt)
        elif start == "max":
            cands = trees + ([alt] if alt is not None else [])
            trees = [max(cands, key=score)]
    trees = list({t.tobytes(): t for t in trees}.values())  # distinct trees, first kept
    rounds, hit2 = 0, False
    S = swap_scores(sc) if swaps else None
    for t in trees:  # every tree of the final beam is improved, the best one wins
        if swaps and not hit2:
            r, hit2 = improve(sc, t, swaps, deadline, memo, S)
            rounds = max(rounds, r)
    scores = [score(t) for t in trees]
    best = int(np.argmax(scores))
    heads, final = trees[best], scores[best]
    repaired = False
    if not np.isfinite(scores[best]):
        # every tree keeps a pruned arc (a dead end of the construction that the
        # swaps could not undo): fall back to the first-order MST over the allowed
        # arcs, improved by the same swaps (as decode_sampling starts)
        # (if the allowed arcs hold a tree at all; else the pruned arc stays)
        alt = _allowed_mst(sc)
        if alt is not None:
            improve(sc, alt, max(swaps, 1), deadline, memo, S)
            heads, repaired = alt, True
            final = score(heads)
    stats = {"parts": int(prob.w.shape[0]), "beam_best": best, "swap_rounds": rounds,
             "repaired": repaired, "deadline_hit": hit or hit2,
             "seconds": time.perf_counter() - t0}
    return heads, final, stats
