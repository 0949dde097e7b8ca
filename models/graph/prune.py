"""First-order pruning of the head candidates (Zhang et al. 2014, Section 4).

A word keeps the heads whose first-order probability p(h | m) (softmax of the
pruning model's arc scores over h) is at least `threshold` times that of its
best head, at most `max_heads` of them. Its two neighbours are always kept so
that every word stays reachable from any root child: the pruned graph always
holds a single-rooted tree.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def prune_kernel(S1, threshold, max_heads, allowed):
    """Fill allowed[h, m] (bool (n+1, n+1)) from first-order scores S1[h, m]."""
    n1 = S1.shape[0]
    log_thr = np.log(threshold)
    allowed[:, :] = False
    best_root_m = 1
    best_root = -np.inf
    any_root = False
    for m in range(1, n1):
        top = -np.inf
        for h in range(n1):
            if h != m and S1[h, m] > top:
                top = S1[h, m]
        col = np.empty(n1)
        for h in range(n1):
            col[h] = S1[h, m] if h != m else -np.inf
        order = np.argsort(-col)
        kept = 0
        for i in range(n1):
            h = order[i]
            if h == m or kept >= max_heads or col[h] - top < log_thr:
                break
            allowed[h, m] = True
            kept += 1
        if m > 1:
            allowed[m - 1, m] = True
        if m + 1 < n1:
            allowed[m + 1, m] = True
        if allowed[0, m]:
            any_root = True
        if S1[0, m] > best_root:
            best_root = S1[0, m]
            best_root_m = m
    if not any_root or n1 == 2:
        allowed[0, best_root_m] = True


def prune(S1: np.ndarray, threshold: float = 0.005, max_heads: int = 20) -> np.ndarray:
    """Boolean matrix allowed[h, m] of kept arcs."""
    allowed = np.zeros(S1.shape, dtype=np.bool_)
    prune_kernel(np.ascontiguousarray(S1, dtype=np.float64), float(threshold), int(max_heads),
                 allowed)
    return allowed


def all_arcs(n: int) -> np.ndarray:
    """No pruning: every arc h -> m with h != m, m >= 1."""
    allowed = np.ones((n + 1, n + 1), dtype=np.bool_)
    np.fill_diagonal(allowed, False)
    allowed[:, 0] = False
    return allowed


def pruning_recall(allowed: np.ndarray, gold_heads: np.ndarray) -> tuple[int, int]:
    """(gold arcs kept, gold arcs) for one sentence."""
    m = np.arange(1, gold_heads.shape[0])
    return int(allowed[gold_heads[1:], m].sum()), int(m.shape[0])


def fit_temperature(columns: list[tuple[np.ndarray, int]]) -> float:
    """Temperature T making softmax(S[:, m] / T) a calibrated p(h | m): the T that
    maximises the likelihood of the gold heads (golden-section search on log T).

    columns: (scores of every possible head of a word, index of its gold head).
    """
    width = max(c.shape[0] for c, _ in columns)
    X = np.full((len(columns), width), -np.inf)
    gold = np.empty(len(columns))
    for i, (c, g) in enumerate(columns):
        X[i, : c.shape[0]] = c
        gold[i] = c[g]
    top = X.max(axis=1)
    X = X - top[:, None]
    gold = gold - top

    def nll(log_t: float) -> float:
        t = np.exp(log_t)
        return float(-(gold / t - np.log(np.exp(X / t).sum(axis=1))).sum())

    lo, hi = np.log(0.05), np.log(50.0)
    phi = (np.sqrt(5.0) - 1.0) / 2.0
    a, b = hi - phi * (hi - lo), lo + phi * (hi - lo)
    fa, fb = nll(a), nll(b)
    for _ in range(40):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - phi * (hi - lo)
            fa = nll(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + phi * (hi - lo)
            fb = nll(b)
    return float(np.exp((lo + hi) / 2.0))
