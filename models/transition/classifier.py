"""Multiclass logistic regression over hashed features, trained with AdaGrad
(Choi & McCallum 2013, Algorithm 2; Duchi et al. 2011).

Weights are a dense float32 table W of shape (n_rows, n_actions): a feature is a row
index (see `features.extract`), an action a column. The score of action a is the sum
of W[rows, a]; probabilities are a softmax over the *valid* actions only, so the
margin of the decoder compares two moves the parser could actually make.

AdaGrad step on one example (x = rows, y = gold action), for each valid action a:
    g_a = [a == y] - P(a | x);  G[r, a] += g_a^2;  W[r, a] += alpha * g_a / (rho + sqrt(G[r, a]))
Updates with |g_a| < eps are skipped (they are tiny and skipping keeps W sparse,
which the compressed model file relies on).
"""
from __future__ import annotations

import logging
import math

from numba import njit

logger = logging.getLogger(__name__)


@njit(cache=True, _nrt=False)
def probabilities(W, rows, valid, out):
    """out[a] = P(a | rows) over the valid actions (0 for invalid ones).

    W: float32 (R, A); rows: int64 (T,); valid: bool (A,); out: float64 (A,).
    Returns the best valid action, or -1 when none is valid.
    """
    A = W.shape[1]
    best = -1
    top = -1e300
    for a in range(A):
        out[a] = 0.0
    for t in range(rows.shape[0]):
        r = rows[t]
        for a in range(A):
            out[a] += W[r, a]
    for a in range(A):
        if valid[a] and out[a] > top:
            top = out[a]
            best = a
    if best < 0:
        return -1
    z = 0.0
    for a in range(A):
        if valid[a]:
            e = math.exp(out[a] - top)
            out[a] = e
            z += e
        else:
            out[a] = 0.0
    for a in range(A):
        out[a] /= z
    return best


@njit(cache=True, _nrt=False)
def adagrad_epoch(W, G, X, y, V, order, alpha, rho, eps, p):
    """One pass of AdaGrad over examples X[order] (rows int32 (N, T)), gold y (N,),
    valid masks V bool (N, A). p: float64 (A,) scratch. Returns (log-loss sum, correct)."""
    loss = 0.0
    correct = 0
    T = X.shape[1]
    A = W.shape[1]
    for q in range(order.shape[0]):
        e = order[q]
        # scores
        for a in range(A):
            p[a] = 0.0
        for t in range(T):
            r = X[e, t]
            for a in range(A):
                p[a] += W[r, a]
        top = -1e300
        best = -1
        for a in range(A):
            if V[e, a] and p[a] > top:
                top = p[a]
                best = a
        z = 0.0
        for a in range(A):
            if V[e, a]:
                p[a] = math.exp(p[a] - top)
                z += p[a]
            else:
                p[a] = 0.0
        gold = y[e]
        if best == gold:
            correct += 1
        loss -= math.log(max(p[gold] / z, 1e-300))
        for a in range(A):
            if not V[e, a]:
                continue
            g = (1.0 if a == gold else 0.0) - p[a] / z
            if abs(g) < eps:
                continue
            g2 = g * g
            for t in range(T):
                r = X[e, t]
                G[r, a] += g2
                W[r, a] += alpha * g / (rho + math.sqrt(G[r, a]))
    return loss, correct
