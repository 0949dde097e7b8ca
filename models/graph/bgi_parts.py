"""Part lists of the BGI-PP decoder: every part over the allowed arcs whose arcs'
probability product reaches `min_prob`, with its model weight.

Tchernowitz, Yedidsion & Reichart (EMNLP 2016), Section 4: a part is read as the
set of arcs it names (at most 3): ARC {h->m}; SIB (h, s, m) {h->s, h->m} (markers
drop an arc); GRAND {g->h, h->m}; TRISIB {h->t, h->s, h->m}; GSIB {g->h, h->s,
h->m}; BIGRAM {h1->m-1, h2->m}. Weights are looked up in batches (`_gather`):
the weight table is far larger than the caches, so many look-ups in flight pay.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types

from .features import (
    MAX_FEATURES,
    PART_BIGRAM,
    PART_GRAND,
    PART_GSIB,
    PART_SIB_L,
    PART_SIB_R,
    PART_TRISIB,
    part_features,
)
from .scoring import _KEY_MUL, EMPTY, SCORING_TYPE, _key

PART_ARC_ONLY = -1  # `ptype` of a plain arc part (weight read from S)
GATHER_CHUNK = 8192  # feature indices hashed before their weights are looked up


# explicit signatures: `_enum` calls `_emit` with ~20 mixes of literal and int64
# arguments, and `build_parts` calls both with fill False and True; each mix was
# a compile of its own (24 of `_emit`). `rows` = (ptype, pabcd, parcs, p): the part
# rows written and the arc probabilities they are kept by
_I1, _I2 = types.int64[::1], types.int64[:, ::1]
_ROWS = types.Tuple((_I1, _I2, _I2, types.float64[::1]))
_SIG_EMIT = types.int64(types.int64, types.boolean, *[types.int64] * 8, _ROWS, types.float64)
_SIG_ENUM = types.int64(types.boolean[:, ::1], types.int64, types.boolean, _ROWS, types.float64,
                        _I1, types.boolean)
_SIG_GATHER = types.void(types.int64, types.int64, _I1, _I2, SCORING_TYPE, _I1, _I1, _I1,
                         types.float64[::1])


@njit(_SIG_EMIT, cache=True, _nrt=False)
def _emit(k, fill, pt, a, b, c, d, a1, a2, a3, rows, min_prob):
    """Write one part (unless fill is False) if the product of its arcs'
    probabilities reaches min_prob; return the new count."""
    ptype, pabcd, parcs, p = rows
    if min_prob > 0.0:
        q = p[a1]
        if a2 >= 0:
            q *= p[a2]
        if a3 >= 0:
            q *= p[a3]
        if q < min_prob:
            return k
    if fill:
        ptype[k] = pt
        pabcd[k, 0] = a; pabcd[k, 1] = b; pabcd[k, 2] = c; pabcd[k, 3] = d
        parcs[k, 0] = a1; parcs[k, 1] = a2; parcs[k, 2] = a3
    return k + 1


@njit(_SIG_ENUM, cache=True, _nrt=False)
def _enum(allowed, order, fill, rows, min_prob, ch, markers):
    """Enumerate the parts over allowed arcs (count only unless fill); rows of
    parcs are arc ids, -1 padded. Plain arc parts are always kept; the others
    only if their arcs' probability product (p flat, as arc ids) >= min_prob.
    As p <= 1, a product's prefix below min_prob skips every part extending it
    (the products are formed in `_emit`'s order, so the same parts are kept)."""
    p = rows[3]
    n1 = allowed.shape[0]
    k = 0
    for h in range(n1):
        for side in range(2):
            nc = 0
            if side == 0:
                c = h - 1
                while c >= 1:
                    if allowed[h, c]:
                        ch[nc] = c; nc += 1
                    c -= 1
                sib = PART_SIB_L
            else:
                for c in range(h + 1, n1):
                    if allowed[h, c]:
                        ch[nc] = c; nc += 1
                sib = PART_SIB_R
            for i in range(nc):
                ci = ch[i]
                ai = h * n1 + ci
                k = _emit(k, fill, PART_ARC_ONLY, h, ci, 0, 0, ai, -1, -1, rows, 0.0)
                if min_prob > 0.0 and p[ai] < min_prob:
                    continue  # every part below holds ai, and p <= 1: none is kept
                if order >= 2:
                    if markers:
                        k = _emit(k, fill, sib, h, h, ci, 0, ai, -1, -1, rows, min_prob)
                        k = _emit(k, fill, sib, h, ci, h, 0, ai, -1, -1, rows, min_prob)
                    for j in range(i + 1, nc):
                        aj = h * n1 + ch[j]
                        k = _emit(k, fill, sib, h, ci, ch[j], 0, ai, aj, -1, rows, min_prob)
                    if h > 0:
                        for g in range(n1):
                            if g != ci and allowed[g, h]:
                                k = _emit(k, fill, PART_GRAND, g, h, ci, 0, g * n1 + h, ai, -1,
                                          rows, min_prob)
                if order >= 3:
                    if markers:
                        k = _emit(k, fill, PART_TRISIB, h, h, h, ci, ai, -1, -1, rows, min_prob)
                    for j in range(i + 1, nc):
                        aj = h * n1 + ch[j]
                        if min_prob > 0.0 and p[ai] * p[aj] < min_prob:
                            continue  # (p <= 1) so are the parts below, skipped unseen
                        if markers:
                            k = _emit(k, fill, PART_TRISIB, h, h, ci, ch[j], ai, aj, -1,
                                      rows, min_prob)
                        for q in range(j + 1, nc):
                            k = _emit(k, fill, PART_TRISIB, h, ci, ch[j], ch[q], ai, aj,
                                      h * n1 + ch[q], rows, min_prob)
                    if h > 0:
                        for g in range(n1):
                            if g == ci or not allowed[g, h]:
                                continue
                            if min_prob > 0.0 and p[g * n1 + h] * p[ai] < min_prob:
                                continue  # as are all the parts below
                            if markers:
                                k = _emit(k, fill, PART_GSIB, g, h, h, ci, g * n1 + h, ai,
                                          -1, rows, min_prob)
                            for j in range(i + 1, nc):
                                if g != ch[j]:
                                    k = _emit(k, fill, PART_GSIB, g, h, ci, ch[j], g * n1 + h,
                                              ai, h * n1 + ch[j], rows, min_prob)
    if order >= 3:
        for m in range(2, n1):
            for h1 in range(n1):
                if not allowed[h1, m - 1]:
                    continue
                if min_prob > 0.0 and p[h1 * n1 + m - 1] < min_prob:
                    continue
                for h2 in range(n1):
                    if allowed[h2, m] and not (h1 == m and h2 == m - 1):
                        k = _emit(k, fill, PART_BIGRAM, m, h1, h2, 0, h1 * n1 + m - 1,
                                  h2 * n1 + m, -1, rows, min_prob)
    return k


@njit(_SIG_GATHER, cache=True, _nrt=False)
def _gather(lo, hi, ptype, pabcd, sc, idx, off, key, w):
    """Second phase of `_score_parts` for parts lo..hi-1: sum their weights (features
    idx[off[i - lo]:off[i - lo + 1]], in order: the sums of `part_score`) and memoise
    them (a key already present keeps its entry; a half-full table is cleared first).
    sc: the sentence's `Scoring` (its S, weights and memo)."""
    S, weights, memo_keys, memo_vals, memo_fill = sc.S, sc.w, sc.mk, sc.mv, sc.mf
    cap = memo_keys.shape[0]
    for i in range(lo, hi):
        if ptype[i] == PART_ARC_ONLY:
            w[i] = S[pabcd[i, 0], pabcd[i, 1]]
            continue
        s = 0.0
        for q in range(off[i - lo], off[i - lo + 1]):
            s += weights[idx[q]]
        w[i] = s
        if memo_fill[0] * 2 >= cap:
            memo_keys[:] = EMPTY
            memo_fill[0] = 0
        kk = key[i - lo]
        j = np.int64((np.uint64(kk) * _KEY_MUL) >> np.uint64(40)) & (cap - 1)
        while memo_keys[j] != EMPTY and memo_keys[j] != kk:
            j = (j + 1) & (cap - 1)
        if memo_keys[j] == kk:
            continue
        memo_keys[j] = kk
        memo_vals[j] = s
        memo_fill[0] += 1


@njit(cache=True, _nrt=False)
def _score_parts(ptype, pabcd, parcs, sc, w, arity, cnt, buf, idx, off, key):
    """Weights of the parts (the values `part_score` gives, memoised as it does),
    arities and the per-arc part counts (cnt, made cumulative). In chunks of
    idx's size: first every part's features, then the weight look-ups in one
    loop: the look-ups of many parts are in flight at once (~2.5x faster than
    hashing and looking up part by part; the weights are far larger than the cache).
    idx int64 (C,), C >= MAX_FEATURES; off, key int64 (C + 1,) scratch; sc: `Scoring`."""
    attrs, upos_prefix, mask = sc.attrs, sc.up, sc.mask
    P = ptype.shape[0]
    C = idx.shape[0]
    lo = 0
    k = 0
    for i in range(P):
        for j in range(3):
            if parcs[i, j] >= 0:
                arity[i] += 1
                cnt[parcs[i, j] + 1] += 1
        if k + MAX_FEATURES > C or i - lo >= C:
            off[i - lo] = k
            _gather(lo, i, ptype, pabcd, sc, idx, off, key, w)
            lo = i
            k = 0
        off[i - lo] = k
        if ptype[i] == PART_ARC_ONLY:
            continue
        key[i - lo] = _key(ptype[i], pabcd[i, 0], pabcd[i, 1], pabcd[i, 2], pabcd[i, 3])
        nf = part_features(attrs, upos_prefix, ptype[i], pabcd[i, 0], pabcd[i, 1], pabcd[i, 2],
                           pabcd[i, 3], buf)
        for j in range(nf):
            idx[k] = np.int64(buf[j] & mask)
            k += 1
    off[P - lo] = k
    _gather(lo, P, ptype, pabcd, sc, idx, off, key, w)
    for a in range(cnt.shape[0] - 1):
        cnt[a + 1] += cnt[a]


@njit(cache=True, _nrt=False)
def _fill_index(parcs, pos, apart):
    for i in range(parcs.shape[0]):
        for j in range(3):
            a = parcs[i, j]
            if a >= 0:
                apart[pos[a]] = i
                pos[a] += 1


@njit(cache=True)
def build_parts(allowed, sc, p, min_prob, markers):
    """Parts over the allowed arcs: weights (float64 (P,)), arcs (int64 (P, 3)),
    arity (int64 (P,)) and the arc -> parts index (CSR: aptr (n1*n1+1,), apart).
    Higher-order parts whose arcs' probability product is below min_prob are
    left out (0: all parts); markers False leaves out the parts with a
    first/last-child marker. Allocates, then runs refcount-free kernels. sc: the
    sentence's `Scoring` (the memo is filled with the parts' scores)."""
    n1 = allowed.shape[0]
    ch = np.empty(n1, np.int64)
    P = _enum(allowed, sc.order, False, (np.empty(0, np.int64), np.empty((0, 4), np.int64),
              np.empty((0, 3), np.int64), p), min_prob, ch, markers)
    ptype = np.empty(P, np.int64)
    pabcd = np.empty((P, 4), np.int64)
    parcs = np.empty((P, 3), np.int64)
    _enum(allowed, sc.order, True, (ptype, pabcd, parcs, p), min_prob, ch, markers)
    w = np.empty(P)
    arity = np.zeros(P, np.int64)
    buf = np.empty(MAX_FEATURES, dtype=np.uint64)
    cnt = np.zeros(n1 * n1 + 1, np.int64)
    C = GATHER_CHUNK
    _score_parts(ptype, pabcd, parcs, sc, w, arity, cnt, buf, np.empty(C, np.int64),
                 np.empty(C + 1, np.int64), np.empty(C + 1, np.int64))
    apart = np.empty(cnt[n1 * n1], np.int64)
    pos = cnt[:-1].copy()
    _fill_index(parcs, pos, apart)
    return w, parcs, arity, cnt, apart
