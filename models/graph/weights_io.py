"""Compact storage of hashed weight vectors: sparse indices + float16 values.

Weights with |w| below a small threshold are dropped (they hardly move a
score) and the rest are stored as float16 in a compressed npz, so a model of
millions of hashed features stays a few MB.
"""
from __future__ import annotations

import numpy as np


def to_sparse(w: np.ndarray, min_abs: float = 1e-4, rel: float = 0.0
              ) -> tuple[np.ndarray, np.ndarray]:
    """(gaps between kept indices as uint32, values as float16); gaps compress well.

    Weights below max(min_abs, rel * median |w| of the non-zero weights) are
    dropped. On en_ewt dev (third-order model) rel = 0.5 costs 0.07 UAS and
    shrinks the file from 17 to 13.5 MB; rel = 2 costs 0.4 UAS for 3.9 MB.
    """
    a = np.abs(w)
    if rel > 0.0 and np.any(a > 0):
        min_abs = max(min_abs, rel * float(np.median(a[a > 0])))
    idx = np.flatnonzero(a >= min_abs)
    gaps = np.diff(idx, prepend=0).astype(np.uint32)
    return gaps, w[idx].astype(np.float16)


def from_sparse(size: int, gaps: np.ndarray, vals: np.ndarray) -> np.ndarray:
    w = np.zeros(size, dtype=np.float32)
    w[np.cumsum(gaps.astype(np.int64))] = vals.astype(np.float32)
    return w
