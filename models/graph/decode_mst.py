"""Exact first-order decoding: maximum spanning arborescence (Chu-Liu-Edmonds).

Chu & Liu (1965), Edmonds (1967), as used for non-projective parsing by
McDonald et al. (2005, Section 2.2.1). The O(n^3) contract-and-expand form:
simple, exact, and fast enough for sentences of a few hundred words. The UD
constraint of a single word under the root is imposed exactly by lowering
every root arc by a constant larger than any score difference, so the optimum
uses one root arc first and maximises the score second.
"""
from __future__ import annotations

import numpy as np
from numba import njit
from numba.typed import List


@njit(cache=True)
def _best_in(S):
    k = S.shape[0]
    best = np.full(k, -1, dtype=np.int64)
    for j in range(1, k):
        bs = -np.inf
        for i in range(k):
            if i != j and S[i, j] > bs:
                bs = S[i, j]
                best[j] = i
    return best


@njit(cache=True)
def _find_cycle(best):
    """Nodes of one cycle of the graph j -> best[j], or an empty array."""
    k = best.shape[0]
    color = np.zeros(k, dtype=np.int64)  # 0 new, 1 on current path, 2 done
    for start in range(1, k):
        if color[start] != 0:
            continue
        v = start
        while v > 0 and color[v] == 0:
            color[v] = 1
            v = best[v]
        if v > 0 and color[v] == 1:
            cyc = [v]
            u = best[v]
            while u != v:
                cyc.append(u)
                u = best[u]
            return np.array(cyc, dtype=np.int64)
        v = start
        while v > 0 and color[v] == 1:
            color[v] = 2
            v = best[v]
    return np.empty(0, dtype=np.int64)


@njit(cache=True)
def _chu_liu_edmonds(S):
    """Heads of the maximum spanning arborescence rooted at 0 of S[h, m]."""
    levels_best = List()
    levels_incyc = List()
    levels_src = List()
    levels_dst = List()
    cur = S
    while True:
        k = cur.shape[0]
        best = _best_in(cur)
        cyc = _find_cycle(best)
        if cyc.shape[0] == 0:
            break
        incyc = np.zeros(k, dtype=np.bool_)
        for v in cyc:
            incyc[v] = True
        cyc_score = 0.0
        for v in cyc:
            cyc_score += cur[best[v], v]
        # new indices: nodes outside the cycle keep their order, the cycle is the last node
        idx = np.full(k, -1, dtype=np.int64)
        nk = 0
        for v in range(k):
            if not incyc[v]:
                idx[v] = nk
                nk += 1
        c = nk
        nk += 1
        new = np.full((nk, nk), -np.inf)
        src = np.full((nk, nk), -1, dtype=np.int64)
        dst = np.full((nk, nk), -1, dtype=np.int64)
        for u in range(k):
            for v in range(k):
                if u == v or cur[u, v] == -np.inf:
                    continue
                if incyc[u] and incyc[v]:
                    continue
                if incyc[v]:
                    s = cur[u, v] - cur[best[v], v] + cyc_score
                    a, b = idx[u], c
                elif incyc[u]:
                    s = cur[u, v]
                    a, b = c, idx[v]
                else:
                    s = cur[u, v]
                    a, b = idx[u], idx[v]
                if s > new[a, b]:
                    new[a, b] = s
                    src[a, b] = u
                    dst[a, b] = v
        levels_best.append(best)
        levels_incyc.append(incyc)
        levels_src.append(src)
        levels_dst.append(dst)
        cur = new
    heads = best
    for li in range(len(levels_best) - 1, -1, -1):
        best = levels_best[li]
        incyc = levels_incyc[li]
        src = levels_src[li]
        dst = levels_dst[li]
        k = best.shape[0]
        lower = np.full(k, -1, dtype=np.int64)
        for v in range(k):
            if incyc[v]:
                lower[v] = best[v]
        for b in range(1, heads.shape[0]):
            a = heads[b]
            lower[dst[a, b]] = src[a, b]
        heads = lower
    return heads


@njit(cache=True)
def decode_mst_kernel(S):
    """MST heads of the arc scores S (float64 (n+1, n+1), -inf = no arc) with one
    word under the root. heads[0] = -1."""
    n1 = S.shape[0]
    W = S.copy()
    big = 1.0
    for i in range(n1):
        for j in range(n1):
            if W[i, j] != -np.inf:
                big += abs(W[i, j])
    for j in range(n1):
        if W[0, j] != -np.inf:
            W[0, j] -= 2.0 * big
    for i in range(n1):
        W[i, i] = -np.inf
    heads = _chu_liu_edmonds(W)
    heads[0] = -1
    return heads


def decode_mst(scores: np.ndarray) -> np.ndarray:
    """Typed wrapper: exact MST with a single root child for a score matrix."""
    S = np.ascontiguousarray(scores, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] != S.shape[1] or S.shape[0] < 2:
        raise ValueError("scores must be a square matrix of at least 2x2")
    return decode_mst_kernel(S)
