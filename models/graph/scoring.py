"""Scoring kernels: arc score matrices, memoised part scores, tree scores.

A tree's score is the sum over heads h of `head_score(h)` (the arcs, sibling,
grandparent, grand-sibling and tri-sibling parts of h's children) plus the
head-bigram parts. Changing one word's head touches only a few heads' terms,
which is what makes hill-climbing cheap (Zhang et al. 2014, Section 3). Part
scores are memoised per sentence in an open-addressing table because restarts
revisit the same parts over and over.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit, typeof, types

from .features import (
    MAX_FEATURES,
    MAX_VALENCY,
    PART_ARC,
    PART_BIGRAM,
    PART_GRAND,
    PART_GSIB,
    PART_SIB_L,
    PART_SIB_R,
    PART_TRISIB,
    PART_VALENCY,
    arc_features,
    part_features,
)

# The arrays every part score of one sentence reads, in one named tuple (as pynndescent
# packs a tree's arrays): the model's order, the first-order arc scores S, the encoded
# attributes and UPOS prefixes, the weights and their hash mask, the memo's keys, values
# and fill. Every kernel from `part_score` up takes it whole; `head_score` and `_part_miss`
# have one explicit signature each (compiled once, not for each mix of int32 and int64
# positions and literal part types the decoders call them with).
Scoring = namedtuple("Scoring", "order S attrs up w mask mk mv mf")
SCORING_TYPE = typeof(Scoring(0, np.zeros((1, 1)), np.zeros((1, 1), np.uint64),
                              np.zeros((1, 1), np.int32), np.zeros(1, np.float32), np.uint64(0),
                              np.zeros(1, np.int64), np.zeros(1), np.zeros(1, np.int64)))
_SIG_PART_MISS = types.float64(*[types.int64] * 6, SCORING_TYPE, types.uint64[::1])
_SIG_HEAD_SCORE = types.float64(types.int64, types.int64[::1], SCORING_TYPE, types.int64[:, ::1],
                                types.uint64[::1])

NO_HEAD = -2          # heads[m] while m is detached during a move
EMPTY = np.int64(-1)  # free slot of the memo table
_KEY_MUL = np.uint64(0x9E3779B97F4A7C15)


def memo_capacity(n: int) -> int:
    """Memo slots for a sentence of n words: grows with n^2, capped at 2^20."""
    want = max(1024, 12 * (n + 1) * (n + 1))
    cap = 1 << (want - 1).bit_length()
    return min(cap, 1 << 20)


def new_memo(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    cap = memo_capacity(n)
    return np.full(cap, -1, dtype=np.int64), np.zeros(cap, dtype=np.float64), np.zeros(1, np.int64)


@njit(cache=True, _nrt=False)
def _arc_scores_into(attrs, upos_prefix, weights, mask, allowed, out, buf):
    n1 = attrs.shape[0]
    for h in range(n1):
        for m in range(n1):
            out[h, m] = -np.inf
            if m == 0 or h == m or not allowed[h, m]:
                continue
            k = arc_features(attrs, upos_prefix, h, m, buf, 0)
            s = 0.0
            for j in range(k):
                s += weights[buf[j] & mask]
            out[h, m] = s


@njit(cache=True)
def arc_scores(attrs, upos_prefix, weights, mask, allowed):
    """Arc score matrix S[h, m] (float64, (n+1, n+1)); -inf where not allowed[h, m].

    The loop runs in a kernel compiled without reference counting: per-call
    array inc/decrefs otherwise cost more than the features themselves."""
    n1 = attrs.shape[0]
    out = np.empty((n1, n1))
    buf = np.empty(MAX_FEATURES, dtype=np.uint64)
    _arc_scores_into(attrs, upos_prefix, weights, mask, allowed, out, buf)
    return out


@njit(_SIG_PART_MISS, cache=True, _nrt=False)
def _part_miss(ptype, a, b, c, d, key, sc, buf):
    """Slow path of part_score: compute the part's features and store the score."""
    memo_keys, memo_vals, memo_fill = sc.mk, sc.mv, sc.mf
    cap = memo_keys.shape[0]
    if memo_fill[0] * 2 >= cap:
        memo_keys[:] = EMPTY
        memo_fill[0] = 0
    i = np.int64((np.uint64(key) * _KEY_MUL) >> np.uint64(40)) & (cap - 1)
    while memo_keys[i] != EMPTY:
        i = (i + 1) & (cap - 1)
    k = part_features(sc.attrs, sc.up, ptype, a, b, c, d, buf)
    w = sc.w
    mask = sc.mask
    s = 0.0
    for j in range(k):
        s += w[buf[j] & mask]
    memo_keys[i] = key
    memo_vals[i] = s
    memo_fill[0] += 1
    return s


@njit(cache=True, inline="always")
def _key(ptype, a, b, c, d):
    return (np.int64(ptype) << 40) | (np.int64(a) << 30) | (np.int64(b) << 20) \
        | (np.int64(c) << 10) | np.int64(d)


@njit(cache=True, inline="always")
def _memo_get(memo_keys, memo_vals, key):
    """Memoised score of a part key, or NaN when absent (a conditioned loop, not
    `while True` + return, which numba compiles far slower)."""
    cap = memo_keys.shape[0]
    i = np.int64((np.uint64(key) * _KEY_MUL) >> np.uint64(40)) & (cap - 1)
    kk = memo_keys[i]
    while kk != key and kk != EMPTY:
        i = (i + 1) & (cap - 1)
        kk = memo_keys[i]
    if kk == key:
        return memo_vals[i]
    return np.nan


@njit(cache=True, _nrt=False)
def part_score(ptype, a, b, c, d, sc, buf):
    """Score of one higher-order part, memoised (positions < 1024); sc: `Scoring`."""
    key = _key(ptype, a, b, c, d)
    v = _memo_get(sc.mk, sc.mv, key)
    if v != v:
        v = _part_miss(ptype, a, b, c, d, key, sc, buf)
    return v


@njit(cache=True)
def head_parts(h, heads, order, parts):
    """Write the parts headed by h (its children's arcs and the higher-order
    parts over them) as rows (type, a, b, c, d) of `parts`; return the count.

    Siblings are chained outward from h on each side, with h itself as the
    start/end marker (McDonald & Pereira 2006; Koo & Collins 2010).
    """
    n1 = heads.shape[0]
    g = -1
    if h > 0:
        g = heads[h]
    k = 0
    for side in range(2):
        prev2 = h
        prev = h
        count = 0
        if side == 0:
            c, step, sib = h - 1, -1, PART_SIB_L
        else:
            c, step, sib = h + 1, 1, PART_SIB_R
        while 1 <= c < n1:
            if heads[c] == h:
                parts[k, 0] = PART_ARC; parts[k, 1] = h; parts[k, 2] = c; k += 1
                if order >= 2:
                    parts[k, 0] = sib; parts[k, 1] = h; parts[k, 2] = prev; parts[k, 3] = c
                    parts[k, 4] = 0; k += 1
                    if g >= 0:
                        parts[k, 0] = PART_GRAND; parts[k, 1] = g; parts[k, 2] = h
                        parts[k, 3] = c; parts[k, 4] = 0; k += 1
                if order >= 3:
                    parts[k, 0] = PART_TRISIB; parts[k, 1] = h; parts[k, 2] = prev2
                    parts[k, 3] = prev; parts[k, 4] = c; k += 1
                    if g >= 0:
                        parts[k, 0] = PART_GSIB; parts[k, 1] = g; parts[k, 2] = h
                        parts[k, 3] = prev; parts[k, 4] = c; k += 1
                prev2 = prev
                prev = c
                count += 1
            c += step
        if order >= 2:
            parts[k, 0] = sib; parts[k, 1] = h; parts[k, 2] = prev; parts[k, 3] = h
            parts[k, 4] = 0; k += 1
            parts[k, 0] = PART_VALENCY; parts[k, 1] = h; parts[k, 2] = side
            parts[k, 3] = min(count, MAX_VALENCY); parts[k, 4] = 0; k += 1
    return k


@njit(_SIG_HEAD_SCORE, cache=True, _nrt=False)
def head_score(h, heads, sc, parts, buf):
    """Sum of the scores of the parts headed by h; arcs are read from S.

    The same walk as `head_parts`, scoring as it goes: the decoders' innermost
    loop. Each part is looked up in the memo inline and `_part_miss` is called
    only on a miss: an inlined helper taking all the arrays costs numba a
    reference-count round trip per array per part, which dominated decoding.
    (`parts` is unused, kept for the signature; tests check both walks agree.)
    """
    order, S, memo_keys, memo_vals = sc.order, sc.S, sc.mk, sc.mv
    n1 = heads.shape[0]
    g = -1
    if h > 0:
        g = heads[h]
    total = 0.0
    for side in range(2):
        prev2 = h
        prev = h
        count = 0
        if side == 0:
            c, step, sib = h - 1, -1, PART_SIB_L
        else:
            c, step, sib = h + 1, 1, PART_SIB_R
        while 1 <= c < n1:
            if heads[c] == h:
                total += S[h, c]
                if order >= 2:
                    key = _key(sib, h, prev, c, 0)
                    v = _memo_get(memo_keys, memo_vals, key)
                    if v != v:
                        v = _part_miss(sib, h, prev, c, 0, key, sc, buf)
                    total += v
                    if g >= 0:
                        key = _key(PART_GRAND, g, h, c, 0)
                        v = _memo_get(memo_keys, memo_vals, key)
                        if v != v:
                            v = _part_miss(PART_GRAND, g, h, c, 0, key, sc, buf)
                        total += v
                if order >= 3:
                    key = _key(PART_TRISIB, h, prev2, prev, c)
                    v = _memo_get(memo_keys, memo_vals, key)
                    if v != v:
                        v = _part_miss(PART_TRISIB, h, prev2, prev, c, key, sc, buf)
                    total += v
                    if g >= 0:
                        key = _key(PART_GSIB, g, h, prev, c)
                        v = _memo_get(memo_keys, memo_vals, key)
                        if v != v:
                            v = _part_miss(PART_GSIB, g, h, prev, c, key, sc, buf)
                        total += v
                prev2 = prev
                prev = c
                count += 1
            c += step
        if order >= 2:
            key = _key(sib, h, prev, h, 0)
            v = _memo_get(memo_keys, memo_vals, key)
            if v != v:
                v = _part_miss(sib, h, prev, h, 0, key, sc, buf)
            total += v
            val = min(count, MAX_VALENCY)
            key = _key(PART_VALENCY, h, side, val, 0)
            v = _memo_get(memo_keys, memo_vals, key)
            if v != v:
                v = _part_miss(PART_VALENCY, h, side, val, 0, key, sc, buf)
            total += v
    return total


@njit(cache=True, _nrt=False)
def bigram_score(m, heads, sc, buf):
    """Head-bigram part of words m-1 and m (third order only; 0 outside 2..n)."""
    if sc.order < 3 or m < 2 or m >= heads.shape[0]:
        return 0.0
    return part_score(PART_BIGRAM, m, heads[m - 1], heads[m], 0, sc, buf)


@njit(cache=True)
def tree_score(heads, sc):
    """Total score of the tree `heads` (heads[0] ignored); sc: the sentence's `Scoring`."""
    n1 = heads.shape[0]
    parts = np.empty((5 * n1 + 8, 5), dtype=np.int64)
    buf = np.empty(MAX_FEATURES, dtype=np.uint64)
    total = 0.0
    for h in range(n1):
        total += head_score(h, heads, sc, parts, buf)
    for m in range(2, n1):
        total += bigram_score(m, heads, sc, buf)
    return total


@njit(cache=True)
def tree_features(heads, order, attrs, upos_prefix, mask):
    """Masked feature indices of every part of the tree (with repeats)."""
    n1 = heads.shape[0]
    parts = np.empty((5 * n1 + 8, 5), dtype=np.int64)
    buf = np.empty(MAX_FEATURES, dtype=np.uint64)
    out = np.empty(n1 * (5 * MAX_FEATURES) + 64, dtype=np.int64)
    k = 0
    for h in range(n1):
        np_ = head_parts(h, heads, order, parts)
        for i in range(np_):
            if k + MAX_FEATURES > out.shape[0]:
                grown = np.empty(out.shape[0] * 2, dtype=np.int64)
                grown[:k] = out[:k]
                out = grown
            nf = part_features(attrs, upos_prefix, parts[i, 0], parts[i, 1], parts[i, 2],
                               parts[i, 3], parts[i, 4], buf)
            for j in range(nf):
                out[k] = np.int64(buf[j] & mask); k += 1
    if order >= 3:
        for m in range(2, n1):
            if k + MAX_FEATURES > out.shape[0]:
                grown = np.empty(out.shape[0] * 2, dtype=np.int64)
                grown[:k] = out[:k]
                out = grown
            nf = part_features(attrs, upos_prefix, PART_BIGRAM, m, heads[m - 1], heads[m], 0, buf)
            for j in range(nf):
                out[k] = np.int64(buf[j] & mask); k += 1
    return out[:k]
