"""Candidate tables the tree samplers and hill-climbers walk over.

From the allowed-arc mask and the arc scores, build per-word candidate head
lists (root excluded), cumulative sampling weights for Wilson's walk (uniform,
or the first-order distribution softmax(S[:, m])) and the root-arc weights.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit


@dataclass(frozen=True)
class SearchSpace:
    cand: np.ndarray      # int32 (n+1, K)
    ncand: np.ndarray     # int32 (n+1)
    root_ok: np.ndarray   # bool (n+1)
    cdf: np.ndarray       # float64 (n+1, K)
    root_cdf: np.ndarray  # float64 (n+1)


@njit(cache=True)
def _tables(allowed, S, weighted, cand, ncand, root_ok, cdf, root_cdf):
    n1 = allowed.shape[0]
    for m in range(1, n1):
        k = 0
        top = -np.inf
        for h in range(1, n1):
            if allowed[h, m] and S[h, m] > top:
                top = S[h, m]
        acc = 0.0
        for h in range(1, n1):
            if allowed[h, m]:
                cand[m, k] = h
                acc += np.exp(S[h, m] - top) if weighted else 1.0
                cdf[m, k] = acc
                k += 1
        ncand[m] = k
        root_ok[m] = allowed[0, m]
    top = -np.inf
    for m in range(1, n1):
        if root_ok[m] and S[0, m] > top:
            top = S[0, m]
    acc = 0.0
    root_cdf[0] = 0.0
    for m in range(1, n1):
        if root_ok[m]:
            acc += np.exp(S[0, m] - top) if weighted else 1.0
        root_cdf[m] = acc


def build_search_space(allowed: np.ndarray, S: np.ndarray, init: str = "first_order"
                       ) -> SearchSpace:
    """Tables for `init` in {"uniform", "first_order"}."""
    if init not in ("uniform", "first_order"):
        raise ValueError(f"unknown init {init!r}")
    n1 = allowed.shape[0]
    width = max(1, int(allowed[1:, 1:].sum(axis=0).max()) if n1 > 1 else 1)
    cand = np.zeros((n1, width), dtype=np.int32)
    ncand = np.zeros(n1, dtype=np.int32)
    root_ok = np.zeros(n1, dtype=np.bool_)
    cdf = np.zeros((n1, width), dtype=np.float64)
    root_cdf = np.zeros(n1, dtype=np.float64)
    _tables(allowed, S, init == "first_order", cand, ncand, root_ok, cdf, root_cdf)
    return SearchSpace(cand, ncand, root_ok, cdf, root_cdf)
