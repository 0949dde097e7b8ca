"""Low-rank tensor arc scores (Lei, Xin, Zhang, Barzilay & Jaakkola, ACL 2014).

Each arc h -> m gets, besides the sparse features' score, the score of a rank-r
tensor over the head's word features phi_h, the modifier's phi_m and the arc's
phi_hm (Section 3, eq. 2):

    T(h -> m) = sum_k [U phi_h]_k [V phi_m]_k [W phi_hm]_k

phi_h and phi_m are the same twelve hashed word templates (the `encode` attribute
columns the sparse templates read: form, tag, suffix, word class, and the tags
around the word; Section 3, "Feature vectors"); phi_hm is a bias plus the arc's
direction and binned distance, so [W phi_hm] is the sum of two rows of W. The arc
matrix gets `lam * T` beside the sparse score (lam = 1 - gamma, gamma = 0.3 as in
RBGParser); every other part is scored as before.

Training (`tensor_online`; Section 4, "Online learning") is one passive-aggressive
step over the sparse weights, U, V and W together. U and V start as small random
values on the rows that training words use, W on its 26 rows: a product of zero
matrices has no gradient.

Kernels: `word_rows` (the hashed rows of every word), `project` (U phi for every
word), `tensor_scores_into` (T over the allowed arcs) and `tensor_gradients` (the
gradient of T(gold) - T(pred)); `TensorArcs` is the typed API a model holds.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .encode import A_CLASS, A_SUFFIX, A_UPOS, A_WORD, A_XPOS
from .features import OUTSIDE, _dist_bin, fhash

TENSOR_FEATURE_SET = "tensor-v1"
N_WORD_FEATURES = 12
N_ARC_ROWS = 32          # row 0: bias; 1..25: direction and binned distance (`arc_code`)


@njit(cache=True, inline="always")
def _at(attrs, i, col):
    if i < 0 or i >= attrs.shape[0]:
        return OUTSIDE
    return attrs[i, col]


@njit(cache=True, _nrt=False)
def _word_rows_into(attrs, mask, out):
    z = np.uint64(0)
    for i in range(attrs.shape[0]):
        w = attrs[i, A_WORD]
        p = attrs[i, A_UPOS]
        pl = _at(attrs, i - 1, A_UPOS)
        pr = _at(attrs, i + 1, A_UPOS)
        out[i, 0] = np.int64(fhash(200, z, z, z, z, z) & mask)
        out[i, 1] = np.int64(fhash(201, w, z, z, z, z) & mask)
        out[i, 2] = np.int64(fhash(202, p, z, z, z, z) & mask)
        out[i, 3] = np.int64(fhash(203, attrs[i, A_XPOS], z, z, z, z) & mask)
        out[i, 4] = np.int64(fhash(204, attrs[i, A_CLASS], z, z, z, z) & mask)
        out[i, 5] = np.int64(fhash(205, attrs[i, A_SUFFIX], p, z, z, z) & mask)
        out[i, 6] = np.int64(fhash(206, w, p, z, z, z) & mask)
        out[i, 7] = np.int64(fhash(207, pl, z, z, z, z) & mask)
        out[i, 8] = np.int64(fhash(208, pr, z, z, z, z) & mask)
        out[i, 9] = np.int64(fhash(209, pl, p, z, z, z) & mask)
        out[i, 10] = np.int64(fhash(210, p, pr, z, z, z) & mask)
        out[i, 11] = np.int64(fhash(211, pl, p, pr, z, z) & mask)


@njit(cache=True)
def word_rows(attrs, mask):
    """int64 (n+1, N_WORD_FEATURES): the hashed row of each word template, masked."""
    out = np.empty((attrs.shape[0], N_WORD_FEATURES), dtype=np.int64)
    _word_rows_into(attrs, np.uint64(mask), out)
    return out


@njit(cache=True, inline="always")
def arc_code(h, m):
    """Row of W for the direction and binned distance of h -> m (1..25; 0 is the bias):
    the sparse templates' own code (`features._dist_bin`)."""
    return np.int64(_dist_bin(h, m))


@njit(cache=True, _nrt=False)
def _project_into(rows, index, M, out):
    for i in range(rows.shape[0]):
        for k in range(M.shape[1]):
            out[i, k] = 0.0
        for j in range(rows.shape[1]):
            r = index[rows[i, j]]
            if r < 0:
                continue
            for k in range(M.shape[1]):
                out[i, k] += M[r, k]


@njit(cache=True)
def project(rows, index, M):
    """float64 (n+1, rank): sum of the rows of M that each word's features select;
    `index` maps a hashed row to a row of M (-1: no row, the feature adds nothing)."""
    out = np.empty((rows.shape[0], M.shape[1]))
    _project_into(rows, index, M, out)
    return out


@njit(cache=True, _nrt=False)
def tensor_scores_into(P, Q, W, allowed, lam, out):
    """out[h, m] += lam * sum_k P[h, k] Q[m, k] (W[0, k] + W[arc_code(h, m), k]) on every
    allowed arc (a pruned arc's -inf stays)."""
    n1 = P.shape[0]
    r = P.shape[1]
    for h in range(n1):
        for m in range(1, n1):
            if h == m or not allowed[h, m]:
                continue
            c = arc_code(h, m)
            s = 0.0
            for k in range(r):
                s += P[h, k] * Q[m, k] * (W[0, k] + W[c, k])
            out[h, m] += lam * s


@njit(cache=True)
def tensor_gradients(gold, pred, P, Q, W):
    """Gradients of T(gold) - T(pred) with respect to each word's projections and W:
    (gP, gQ, gW), float64 (n+1, rank), (n+1, rank), (N_ARC_ROWS, rank). Only words
    whose head differs contribute. gP[h] is the gradient of U's rows selected by
    h's features (scattered by `scatter_rows`), gQ likewise for V."""
    n1, r = P.shape
    gP = np.zeros((n1, r))
    gQ = np.zeros((n1, r))
    gW = np.zeros((W.shape[0], r))
    for m in range(1, n1):
        g = gold[m]
        p = pred[m]
        if g == p:
            continue
        cg = arc_code(g, m)
        cp = arc_code(p, m)
        for k in range(r):
            rg = W[0, k] + W[cg, k]
            rp = W[0, k] + W[cp, k]
            gP[g, k] += Q[m, k] * rg
            gP[p, k] -= Q[m, k] * rp
            gQ[m, k] += P[g, k] * rg - P[p, k] * rp
            a = P[g, k] * Q[m, k]
            b = P[p, k] * Q[m, k]
            gW[0, k] += a - b
            gW[cg, k] += a
            gW[cp, k] -= b
    return gP, gQ, gW


@njit(cache=True)
def scatter_rows(rows, gP):
    """(unique hashed rows, their summed gradient): the gradient of the matrix rows the
    words' features select, gP[i] added to each row of word i (rows repeat across
    words, e.g. the bias or a shared tag)."""
    n1, nf = rows.shape
    r = gP.shape[1]
    flat = np.empty(n1 * nf, dtype=np.int64)
    who = np.empty(n1 * nf, dtype=np.int64)
    k = 0
    for i in range(n1):
        nz = False
        for j in range(r):
            if gP[i, j] != 0.0:
                nz = True
                break
        if not nz:
            continue
        for j in range(nf):
            flat[k] = rows[i, j]
            who[k] = i
            k += 1
    order = np.argsort(flat[:k], kind="mergesort")
    uniq = np.empty(k, dtype=np.int64)
    grad = np.zeros((k, r))
    u = -1
    last = -1
    for t in range(k):
        i = order[t]
        if flat[i] != last:
            u += 1
            uniq[u] = flat[i]
            last = flat[i]
        for j in range(r):
            grad[u, j] += gP[who[i], j]
    return uniq[:u + 1], grad[:u + 1]


@dataclass(frozen=True)
class TensorArcs:
    """A trained tensor component: the rows U and V keep, and how to reach them.

    index: int32 (2**log2,), hashed row -> row of U and V (-1: none); U, V: float32
    (rows, rank); W: float32 (N_ARC_ROWS, rank); lam = 1 - gamma.
    """

    index: np.ndarray
    U: np.ndarray
    V: np.ndarray
    W: np.ndarray
    lam: float

    @property
    def rank(self) -> int:
        return int(self.U.shape[1])

    @property
    def mask(self) -> int:
        return self.index.shape[0] - 1

    def add_scores(self, attrs: np.ndarray, allowed: np.ndarray, S: np.ndarray) -> None:
        """S[h, m] += lam * T(h -> m) on the allowed arcs, in place."""
        rows = word_rows(attrs, self.mask)
        P = project(rows, self.index, self.U)
        Q = project(rows, self.index, self.V)
        tensor_scores_into(P, Q, self.W.astype(np.float64), allowed, float(self.lam), S)

    @classmethod
    def from_dense(cls, U: np.ndarray, V: np.ndarray, W: np.ndarray, used: np.ndarray,
                   lam: float) -> TensorArcs:
        """The compact form of dense training matrices (2**log2, rank): only the rows
        training words use are kept (the others never left zero)."""
        keep = np.flatnonzero(used)
        index = np.full(U.shape[0], -1, dtype=np.int32)
        index[keep] = np.arange(keep.shape[0], dtype=np.int32)
        return cls(index, np.ascontiguousarray(U[keep], np.float32),
                   np.ascontiguousarray(V[keep], np.float32), np.asarray(W, np.float32), lam)

    def arrays(self) -> dict[str, np.ndarray]:
        """What a model file stores: the kept rows (as gaps), U and V as float16."""
        keep = np.flatnonzero(self.index >= 0)
        return {"tensor_rows": np.diff(keep, prepend=0).astype(np.uint32),
                "tensor_size": np.array([self.index.shape[0]], np.int64),
                "tensor_U": self.U.astype(np.float16), "tensor_V": self.V.astype(np.float16),
                "tensor_W": self.W.astype(np.float32)}

    @classmethod
    def from_arrays(cls, data, lam: float) -> TensorArcs:
        keep = np.cumsum(data["tensor_rows"].astype(np.int64))
        index = np.full(int(data["tensor_size"][0]), -1, dtype=np.int32)
        index[keep] = np.arange(keep.shape[0], dtype=np.int32)
        return cls(index, data["tensor_U"].astype(np.float32),
                   data["tensor_V"].astype(np.float32), data["tensor_W"].astype(np.float32),
                   lam)
