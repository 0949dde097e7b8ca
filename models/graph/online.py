"""Online learning kernels: passive-aggressive (MIRA) updates with averaging.

Crammer et al. (2006) PA-I on the feature difference of the gold and the
predicted tree, as used by Zhang et al. (2014, Section 4) with parameter
averaging. The average is kept lazily (Daume's trick): w_avg = w - u / c.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def feature_difference(gold_idx, pred_idx):
    """Unique indices and counts of phi(gold) - phi(pred), zeros dropped."""
    k1 = gold_idx.shape[0]
    k2 = pred_idx.shape[0]
    idx = np.empty(k1 + k2, dtype=np.int64)
    val = np.empty(k1 + k2, dtype=np.float64)
    idx[:k1] = gold_idx
    val[:k1] = 1.0
    idx[k1:] = pred_idx
    val[k1:] = -1.0
    order = np.argsort(idx, kind="mergesort")
    out_i = np.empty(k1 + k2, dtype=np.int64)
    out_v = np.empty(k1 + k2, dtype=np.float64)
    k = 0
    i = 0
    while i < k1 + k2:
        j = i
        s = 0.0
        while j < k1 + k2 and idx[order[j]] == idx[order[i]]:
            s += val[order[j]]
            j += 1
        if s != 0.0:
            out_i[k] = idx[order[i]]
            out_v[k] = s
            k += 1
        i = j
    return out_i[:k], out_v[:k]


@njit(cache=True)
def pa_update(w, u, step, idx, val, loss, C, active):
    """PA-I step on w (float32) with averaging accumulator u (float64); returns tau.

    Only features with active[i] (those seen in some gold tree, as MSTParser's
    feature set) are updated: fewer hash collisions, a smaller model.
    """
    norm2 = 0.0
    for i in range(idx.shape[0]):
        if active[idx[i]]:
            norm2 += val[i] * val[i]
    if norm2 <= 0.0 or loss <= 0.0:
        return 0.0
    tau = min(C, loss / norm2)
    for i in range(idx.shape[0]):
        if not active[idx[i]]:
            continue
        d = tau * val[i]
        w[idx[i]] += d
        u[idx[i]] += step * d
    return tau


def averaged(w: np.ndarray, u: np.ndarray, step: float) -> np.ndarray:
    """The averaged weights w - u / step as float32."""
    return (w.astype(np.float64) - u / max(step, 1.0)).astype(np.float32)
