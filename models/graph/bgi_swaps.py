"""Post-search improvement of BGI-PP (Tchernowitz et al. 2016, Section 6): rounds
of the best single arc swap under the full model.

m takes a new head h'; when h' is in m's subtree, h' is re-hung on m's old head
first (the paper's second case). Without a deadline all rounds are one kernel call
(`swap_rounds`); with one, Python runs a round per call and checks the clock.
Trees are scored with the sentence's part memo (`tree_score_memo`), which the
part building fills, rather than with `Scorer.score`'s fresh one.
"""
from __future__ import annotations

import time

import numpy as np
from numba import njit

from .features import MAX_FEATURES
from .scoring import bigram_score, head_score


@njit(cache=True, _nrt=False)
def _local(heads, hs, nh, bs, nb, sc, parts, buf):
    t = 0.0
    for i in range(nh):
        t += head_score(hs[i], heads, sc, parts, buf)
    for i in range(nb):
        t += bigram_score(bs[i], heads, sc, buf)
    return t


@njit("int64(int64[::1], int64, int64)", cache=True, _nrt=False)
def _push(arr, k, x):
    for i in range(k):
        if arr[i] == x:
            return k
    arr[k] = x
    return k + 1


@njit(cache=True, _nrt=False)
def swap_round(heads, allowed, sc, parts, buf, hs, bs, cur):
    """Apply the best single arc swap (Section 6) to `heads` in place if it gains;
    return the gain (0.0 if none). For m and new head h': if h' is in m's
    subtree, h' first takes m's old head (re-hanging h' and its subtree).
    Only trees with one root child are considered. sc: the sentence's `Scoring`
    (with `swap_scores` as S); hs, bs: int64 scratch (8,);
    cur: float64 scratch (2 * n1 + 1,) for the current head and bigram terms."""
    n1 = heads.shape[0]
    for x in range(n1):
        cur[x] = head_score(x, heads, sc, parts, buf)
    for x in range(n1 + 1):
        cur[n1 + x] = bigram_score(x, heads, sc, buf)
    best = 1e-9
    bm = -1
    bh = -1
    nroot = 0
    for x in range(1, n1):
        if heads[x] == 0:
            nroot += 1
    for m in range(1, n1):
        old = heads[m]
        have_old = False
        old_wo = 0.0
        for h2 in range(n1):
            if h2 == m or h2 == old or not allowed[h2, m]:
                continue
            # is h2 in m's subtree?
            x = h2
            inside = False
            while x > 0:
                if x == m:
                    inside = True
                    break
                x = heads[x]
            p2 = heads[h2] if h2 > 0 else -1
            roots = nroot - (old == 0) + (h2 == 0)
            if inside:
                roots += (old == 0) - (p2 == 0)
            if roots != 1:
                continue
            nh = 0
            nb = 0
            nh = _push(hs, nh, old); nh = _push(hs, nh, h2); nh = _push(hs, nh, m)
            nb = _push(bs, nb, m); nb = _push(bs, nb, m + 1)
            if inside:
                nh = _push(hs, nh, p2)
                nb = _push(bs, nb, h2); nb = _push(bs, nb, h2 + 1)
            before = 0.0
            for i in range(nh):
                before += cur[hs[i]]
            for i in range(nb):
                before += cur[n1 + bs[i]]
            heads[m] = h2
            if inside:
                heads[h2] = old
            if inside:
                after = _local(heads, hs, nh, bs, nb, sc, parts, buf)
            else:  # hs = (old, h2, m): old's term without m is the same for every h2
                if not have_old:
                    old_wo = head_score(old, heads, sc, parts, buf)
                    have_old = True
                after = 0.0 + old_wo
                after += head_score(h2, heads, sc, parts, buf)
                after += head_score(m, heads, sc, parts, buf)
                for i in range(nb):
                    after += bigram_score(bs[i], heads, sc, buf)
            heads[m] = old
            if inside:
                heads[h2] = p2
            if after - before > best:
                best = after - before
                bm = m
                bh = h2
    if bm < 0:
        return 0.0
    x = bh
    while x > 0:
        if x == bm:
            heads[bh] = heads[bm]
            break
        x = heads[x]
    heads[bm] = bh
    return best


@njit(cache=True, _nrt=False)
def swap_rounds(swaps, heads, allowed, sc, parts, buf, hs, bs, cur):
    """Up to `swaps` rounds of `swap_round` in one call (no per-round dispatch);
    return the rounds that gained."""
    for r in range(swaps):
        if swap_round(heads, allowed, sc, parts, buf, hs, bs, cur) <= 0.0:
            return r
    return swaps


def improve(sc, heads: np.ndarray, swaps: int, deadline: float | None = None,
            memo: tuple | None = None, S: np.ndarray | None = None) -> tuple[int, bool]:
    """Up to `swaps` rounds of `swap_round` on heads (in place); rounds used, deadline hit.
    memo: the sentence's part-score memo (new_memo) to reuse, if any; S: `swap_scores(sc)`
    if already made. Without a deadline all rounds run in one kernel call."""
    n1 = heads.shape[0]
    parts = np.empty((5 * n1 + 8, 5), np.int64)
    buf = np.empty(MAX_FEATURES, np.uint64)
    hs = np.empty(8, np.int64)
    bs = np.empty(8, np.int64)
    cur = np.empty(2 * n1 + 1)
    ksc = sc.scoring(swap_scores(sc) if S is None else S, memo)
    if deadline is None:
        return swap_rounds(swaps, heads, sc.allowed, ksc, parts, buf, hs, bs, cur), False
    for r in range(swaps):
        if time.monotonic() > deadline:
            return r, True
        g = swap_round(heads, sc.allowed, ksc, parts, buf, hs, bs, cur)
        if g <= 0.0:
            return r, False
    return swaps, False


def swap_scores(sc) -> np.ndarray:
    """sc.S with a pruned arc (left by a dead end of the construction) at a large
    finite penalty rather than -inf, so that swaps can remove it."""
    return np.where(np.isfinite(sc.S), sc.S, -1e9)


@njit(cache=True, _nrt=False)
def _tree_score(heads, sc, parts, buf):
    """`tree_score` (the same sum, in the same order) with scratch passed in."""
    n1 = heads.shape[0]
    total = 0.0
    for h in range(n1):
        total += head_score(h, heads, sc, parts, buf)
    for m in range(2, n1):
        total += bigram_score(m, heads, sc, buf)
    return total


def tree_score_memo(sc, heads: np.ndarray, memo: tuple, parts: np.ndarray,
                    buf: np.ndarray) -> float:
    """sc.score(heads) with the sentence's part-score memo (the parts already scored
    are not hashed again); scratch parts (int64 (k, 5), unused) and buf (uint64
    (MAX_FEATURES,))."""
    return float(_tree_score(heads, sc.scoring(memo=memo), parts, buf))
