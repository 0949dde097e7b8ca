"""The two MCMC proposals of the sampling decoder, as numba kernels.

Zhang, Lei, Barzilay, Jaakkola & Globerson, "Steps to Excellence" (ACL 2014),
Section 3.2.1 (Gibbs) and Section 3.2.2 / Figure 2 (random walk). Each kernel
makes one proposal on the current tree `heads`, whose head scores F[h] and
bigram scores B[m] are cached and kept up to date (a move changes only the
heads that gain or lose a child, the moved words and the bigrams at them).
The step kernels allocate nothing and are compiled without reference counting
(`_nrt=False`, as hill_climb): the caller passes every scratch array.

- Gibbs: pick a word m other than the root's child r and resample from the
  block of trees that keep every head but those of m and r. The UD single-root
  rule makes that block the heads of m that keep a tree (r stays under the
  root) plus the re-rootings (m under the root, r under a word of m's subtree).
  Each option is scored exactly with the incremental scorer. The block is the
  same from every tree in it, and m is drawn uniformly from the n-1 words other
  than the root's child, so the step is an exact heat-bath move.
- Random walk: pick K words, keep every other head and redraw theirs with
  Wilson's loop-erased walk (fixed words follow their head), each step drawn
  from exp(Q[h, m]/Tp), Q a first-order model's arc scores (the decoder passes
  the model's pruner, a far better first-order model than the third-order
  model's arc part). A walk samples completions of the fixed heads in
  proportion to the product of their arc weights; the root may be drawn only
  when r is among the K, and draws with several root children are redrawn,
  which conditions on valid trees and keeps that proportionality. So
  q(y|y')/q(y'|y) is a ratio of weight products and the MH test is
  log u < (s(y') - s(y))/T - (Q_K(y') - Q_K(y))/Tp (Q_K: Q summed over the K arcs).
  A walk longer than WALK_STEP_CAP * (n+1) steps (only near T = 0) is rejected.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types

from .decode_greedy import _distinct_sum, _is_descendant, _local, moved_local
from .features import MAX_FEATURES
from .global_features import move_delta, scores_into
from .rng import randint, uniform
from .scoring import NO_HEAD, SCORING_TYPE, bigram_score, head_score

WALK_STEP_CAP = 200      # steps per node before a walk is given up (rejected)
WALK_TRIES = 50          # redraws of a walk that put several words under the root


@njit(cache=True)
def init_scores(heads, F, B, sc):
    """Fill F[h] = head_score(h) (float64 (n+2)) and B[m] = bigram_score(m)
    (float64 (n+3)) for the tree `heads`; return the tree's score. sc: `Scoring`."""
    n1 = heads.shape[0]
    parts = np.empty((1, 5), dtype=np.int64)
    buf = np.empty(MAX_FEATURES, dtype=np.uint64)
    F[:] = 0.0
    B[:] = 0.0
    total = 0.0
    for h in range(n1):
        F[h] = head_score(h, heads, sc, parts, buf)
        total += F[h]
    for m in range(2, n1):
        B[m] = bigram_score(m, heads, sc, buf)
        total += B[m]
    return total


@njit(cache=True, _nrt=False)
def _root_child(heads):
    r = 1
    while heads[r] != 0:
        r += 1
    return r


# callers pass literal counts and int64 ones: one explicit signature, one compile
_I1, _F1 = types.int64[::1], types.float64[::1]
_SIG_REFRESH = types.void(_I1, _F1, _F1, _I1, types.int64, _I1, types.int64, SCORING_TYPE,
                          types.int64[:, ::1], types.uint64[::1])


@njit(_SIG_REFRESH, cache=True, _nrt=False)
def _refresh(heads, F, B, hs, nh, ms, nm, sc, parts, buf):
    """Recompute the cached F at hs[:nh] and B at ms[:nm] after a move; sc: the
    sentence's `Scoring`."""
    n1 = heads.shape[0]
    for i in range(nh):
        F[hs[i]] = head_score(hs[i], heads, sc, parts, buf)
    for i in range(nm):
        if ms[i] < n1:
            B[ms[i]] = bigram_score(ms[i], heads, sc, buf)


@njit("int64(float64[::1], int64, uint64[::1])", cache=True, _nrt=False)
def _draw_index(logits, k, state):
    """Index in [0, k) drawn with probability proportional to exp(logits)."""
    top = logits[0]
    for i in range(1, k):
        top = max(top, logits[i])
    total = 0.0
    for i in range(k):
        total += np.exp(logits[i] - top)
    u = uniform(state) * total
    acc = 0.0
    for i in range(k):
        acc += np.exp(logits[i] - top)
        if u < acc:
            return i
    return k - 1


@njit(cache=True, _nrt=False)
def global_refresh(heads, attrs, w, mask, gl):
    """The current tree's global terms into gl's G; their sum (0.0 without globals)."""
    if gl[0][0] != 1:
        return 0.0
    return scores_into(heads, attrs, w, mask, gl[1], gl[2], gl[3], gl[4], gl[6])


@njit(cache=True, _nrt=False)
def gibbs_step(chain, space, sc, T, state, delta, opt, scratch, gl):
    """One Gibbs proposal at temperature T; updates the chain's heads, F, B (and the
    global terms in gl, `global_features.global_scratch`) in place. chain = (heads, F,
    B); space = (cand, ncand, root_ok); sc: the sentence's `Scoring`.

    delta (float64) and opt (int64) hold at least 2 * cand width + 1 options;
    scratch = (hs, ms, parts, buf), hs, ms int64 >= 12. Returns the score change (0.0
    when the drawn tree is the current one) and whether the tree changed.
    """
    heads, F, B = chain
    cand, ncand, root_ok = space
    attrs, w, mask = sc.attrs, sc.w, sc.mask
    hs, ms, parts, buf = scratch
    glob = gl[0][0] == 1
    lo, hi, size, G, mark, gbuf = gl[1], gl[2], gl[3], gl[4], gl[5], gl[6]
    n1 = heads.shape[0]
    if n1 < 3:
        return 0.0, False
    r = _root_child(heads)
    j = 1 + randint(state, n1 - 2)
    m = j if j < r else j + 1
    a = heads[m]
    k = 0
    # r stays the root's child; m takes a head outside its subtree
    heads[m] = NO_HEAD
    fa_new = head_score(a, heads, sc, parts, buf)
    base = F[a] + F[m] + B[m] + B[m + 1]
    for kk in range(ncand[m]):
        b = cand[m, kk]
        if b == a:
            delta[k] = 0.0
        elif _is_descendant(heads, b, m):
            continue
        else:
            new = moved_local(heads, m, b, fa_new, sc, parts, buf)
            delta[k] = new - base - F[b]
            if glob:
                heads[m] = a
                delta[k] += move_delta(heads, m, b, attrs, w, mask, lo, hi, size, G, mark,
                                       gbuf)
                heads[m] = NO_HEAD
        opt[k] = b
        k += 1
    heads[m] = a
    # re-rooting: m under the root, r under b in m's subtree (coded as -1 - b)
    gtotal = 0.0
    if glob and root_ok[m]:
        for i in range(n1):
            gtotal += G[i]
    if root_ok[m]:
        hs[0] = 0; hs[1] = a; hs[2] = m; hs[4] = r
        ms[0] = m; ms[1] = m + 1; ms[2] = r; ms[3] = r + 1
        for kk in range(ncand[r]):
            b = cand[r, kk]
            if not _is_descendant(heads, b, m):
                continue
            hs[3] = b
            old = _distinct_sum(F, hs, 5) + _distinct_sum(B, ms, 4)
            heads[m] = 0
            heads[r] = b
            new = _local(heads, hs, 5, ms, 4, sc, parts, buf)
            if glob:   # two arcs change: the new tree's global score from scratch
                new += scores_into(heads, attrs, w, mask, lo, hi, size, G, gbuf) - gtotal
            heads[m] = a
            heads[r] = 0
            delta[k] = new - old
            opt[k] = -1 - b
            k += 1
    if glob and root_ok[m]:
        scores_into(heads, attrs, w, mask, lo, hi, size, G, gbuf)
    for i in range(k):
        delta[i] /= T
    i = _draw_index(delta, k, state)
    b = opt[i]
    if b == a:
        return 0.0, False
    d = delta[i] * T
    if b >= 0:
        heads[m] = b
        hs[0] = a; hs[1] = b; hs[2] = m
        ms[0] = m; ms[1] = m + 1
        _refresh(heads, F, B, hs, 3, ms, 2, sc, parts, buf)
    else:
        b = -1 - b
        heads[m] = 0
        heads[r] = b
        hs[0] = 0; hs[1] = a; hs[2] = m; hs[3] = b; hs[4] = r
        ms[0] = m; ms[1] = m + 1; ms[2] = r; ms[3] = r + 1
        _refresh(heads, F, B, hs, 5, ms, 4, sc, parts, buf)
    if glob:
        scores_into(heads, attrs, w, mask, lo, hi, size, G, gbuf)
    return d, True


@njit(cache=True, _nrt=False)
def walk_step(chain, space, sc, Q, T, Tp, K, state, walk, scratch, gl):
    """One random-walk MH proposal redrawing K heads from exp(Q/Tp) (Q: float64
    (n+1, n+1) first-order proposal scores, finite on allowed arcs) at temperature
    T; updates the chain's heads, F, B (and gl's global terms) in place when accepted.
    chain = (heads, F, B); space = (cand, ncand, root_ok); sc: the sentence's `Scoring`.

    Scratch: walk = (perm, in_z, in_tree, nxt, cdf, zs, old): perm, nxt (int64 (n+1)),
    in_z, in_tree (bool (n+1)), cdf (float64 (n+1, width+1)), zs, old (int64 >= K);
    scratch = (hs, ms, parts, buf) with hs, ms int64 >= 3K+1. Returns (score change,
    changed, walk given up).
    """
    heads, F, B = chain
    cand, ncand, root_ok = space
    attrs, w, mask = sc.attrs, sc.w, sc.mask
    perm, in_z, in_tree, nxt, cdf, zs, old = walk
    hs, ms, parts, buf = scratch
    n1 = heads.shape[0]
    n = n1 - 1
    if n < 2:
        return 0.0, False, False
    k = min(K, n)
    for i in range(n1):
        perm[i] = i
        in_z[i] = False
    for i in range(k):  # partial Fisher-Yates over words 1..n
        j = 1 + i + randint(state, n - i)
        t = perm[1 + i]; perm[1 + i] = perm[j]; perm[j] = t
        zs[i] = perm[1 + i]
        in_z[zs[i]] = True
    r = _root_child(heads)
    with_root = in_z[r]
    # first-order proposal weights of the K rows: cand (root excluded), then the root
    for i in range(k):
        m = zs[i]
        top = -np.inf
        for kk in range(ncand[m]):
            top = max(top, Q[cand[m, kk], m])
        if with_root and root_ok[m]:
            top = max(top, Q[0, m])
        acc = 0.0
        for kk in range(ncand[m]):
            acc += np.exp((Q[cand[m, kk], m] - top) / Tp)
            cdf[m, kk] = acc
        if with_root and root_ok[m]:
            acc += np.exp((Q[0, m] - top) / Tp)
        cdf[m, ncand[m]] = acc
    cap = WALK_STEP_CAP * n1
    valid = False
    for _ in range(WALK_TRIES):
        for i in range(n1):
            in_tree[i] = False
            nxt[i] = heads[i]
        in_tree[0] = True
        steps = 0
        for i in range(1, n1):
            v = i
            while not in_tree[v] and steps <= cap:
                if in_z[v]:
                    u = uniform(state) * cdf[v, ncand[v]]
                    kk = 0
                    while kk < ncand[v] and cdf[v, kk] <= u:
                        kk += 1
                    nxt[v] = cand[v, kk] if kk < ncand[v] else 0
                v = nxt[v]
                steps += 1
            if steps > cap:
                return 0.0, False, True
            v = i
            while not in_tree[v]:
                in_tree[v] = True
                v = nxt[v]
        roots = 0
        for i in range(k):
            roots += nxt[zs[i]] == 0
        if roots == (1 if with_root else 0):
            valid = True
            break
    if not valid:
        return 0.0, False, False
    same = True
    d1 = 0.0
    nh = 0
    for i in range(k):
        m = zs[i]
        old[i] = heads[m]
        same = same and nxt[m] == old[i]
        d1 += Q[nxt[m], m] - Q[old[i], m]
        hs[nh] = old[i]; hs[nh + 1] = nxt[m]; hs[nh + 2] = m
        nh += 3
        ms[2 * i] = m; ms[2 * i + 1] = m + 1
    if same:
        return 0.0, False, False
    before = _distinct_sum(F, hs, nh) + _distinct_sum(B, ms, 2 * k)
    for i in range(k):
        heads[zs[i]] = nxt[zs[i]]
    d = _local(heads, hs, nh, ms, 2 * k, sc, parts, buf) - before
    if gl[0][0] == 1:    # K arcs change: the global score of the new tree from scratch
        gtotal = 0.0
        for i in range(n1):
            gtotal += gl[4][i]
        d += global_refresh(heads, attrs, w, mask, gl) - gtotal
    if np.log(uniform(state)) < d / T - d1 / Tp:
        _refresh(heads, F, B, hs, nh, ms, 2 * k, sc, parts, buf)
        return d, True, False
    for i in range(k):
        heads[zs[i]] = old[i]
    global_refresh(heads, attrs, w, mask, gl)
    return 0.0, False, False
