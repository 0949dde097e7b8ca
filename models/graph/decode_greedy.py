"""Randomized greedy decoding: hill-climbing with random restarts.

Zhang, Lei, Barzilay & Jaakkola, "Greed is Good if Randomized" (EMNLP 2014),
Figure 1: draw a random tree (Wilson's walk, uniform or first-order weighted),
then repeatedly give each word, bottom-up, the head that most improves the full
(up to third-order) score while keeping a tree; restart until the best tree has
not changed for `converge` restarts, `restarts` is reached or the deadline
passes. Moves keep one word under the root: the root's child changes only by
a re-rooting move (new root child m, old root child re-hung under m).

The numba kernel runs a chunk of restarts; the Python wrapper owns the
deadline, as in UMAP's Python-outer / numba-inner split.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numba import njit, types

from .features import MAX_FEATURES
from .global_features import global_scratch, move_delta, scores_into
from .scoring import NO_HEAD, SCORING_TYPE, Scoring, bigram_score, head_score
from .wilson import sample_tree

_EPS = 1e-9
_TREE_MUL = np.uint64(0x100000001B3)


@dataclass
class GreedyResult:
    heads: np.ndarray       # int64 (n+1), heads[0] = -1
    score: float
    restarts: int           # restarts run
    best_restart: int       # 1-based restart that first found the best tree
    distinct_optima: int    # distinct local optima seen
    deadline_hit: bool
    optima: np.ndarray      # int64 (k, n+1): distinct local optima (for confidence)
    optima_scores: np.ndarray
    optima_counts: np.ndarray


@njit(cache=True, _nrt=False)
def _is_descendant(heads, x, m):
    """True when x lies in the subtree of m (x == m included)."""
    while x > 0:
        if x == m:
            return True
        x = heads[x]
    return x == m


@njit(cache=True, _nrt=False)
def _in_cand(cand, ncand, m, h):
    for k in range(ncand[m]):
        if cand[m, k] == h:
            return True
    return False


@njit(cache=True, _nrt=False)
def _depths(heads, depth):
    n1 = heads.shape[0]
    for i in range(n1):
        depth[i] = -1
    depth[0] = 0
    for i in range(1, n1):
        d = 0
        x = i
        while x > 0 and depth[x] < 0:
            x = heads[x]
            d += 1
        base = depth[x] if x >= 0 else 0
        x = i
        k = d
        while x > 0 and depth[x] < 0:
            depth[x] = base + k
            x = heads[x]
            k -= 1


# callers pass literal counts (4, 5) and int64 ones: one explicit signature, one compile
_I1 = types.int64[::1]
_SIG_LOCAL = types.float64(_I1, _I1, types.int64, _I1, types.int64, SCORING_TYPE,
                           types.int64[:, ::1], types.uint64[::1])


@njit(_SIG_LOCAL, cache=True, _nrt=False)
def _local(heads, hs, nh, ms, nm, sc, parts, buf):
    """Sum of head_score over the distinct heads hs[:nh] and bigrams at ms[:nm]; sc is
    the sentence's `Scoring`."""
    t = 0.0
    for i in range(nh):
        dup = False
        for j in range(i):
            if hs[j] == hs[i]:
                dup = True
        if not dup:
            t += head_score(hs[i], heads, sc, parts, buf)
    for i in range(nm):
        dup = False
        for j in range(i):
            if ms[j] == ms[i]:
                dup = True
        if not dup:
            t += bigram_score(ms[i], heads, sc, buf)
    return t


@njit("float64(float64[::1], int64[::1], int64)", cache=True, _nrt=False)
def _distinct_sum(vals, idx, k):
    t = 0.0
    for i in range(k):
        dup = False
        for j in range(i):
            if idx[j] == idx[i]:
                dup = True
        if not dup:
            t += vals[idx[i]]
    return t


@njit(cache=True, _nrt=False)
def _visit_order(depth, visit, counts):
    """Words by decreasing depth (counting sort, stable): bottom-up order."""
    n1 = depth.shape[0]
    counts[:] = 0
    for i in range(n1):
        counts[depth[i]] += 1
    # start offsets for depths from deepest to shallowest
    pos = 0
    for d in range(n1 - 1, -1, -1):
        c = counts[d]
        counts[d] = pos
        pos += c
    for i in range(n1):
        visit[counts[depth[i]]] = i
        counts[depth[i]] += 1


@njit(cache=True, _nrt=False)
def moved_local(heads, m, b, fa_new, sc, parts, buf):
    """Local score once the detached word m (heads[m] == NO_HEAD) hangs under b:
    F(a) without m (fa_new, the same for every b), the new F(b) and F(m), and the
    head bigrams at m and m+1. heads[m] is NO_HEAD again on return."""
    heads[m] = b
    new = fa_new \
        + head_score(b, heads, sc, parts, buf) \
        + head_score(m, heads, sc, parts, buf) \
        + bigram_score(m, heads, sc, buf) \
        + bigram_score(m + 1, heads, sc, buf)
    heads[m] = NO_HEAD
    return new


@njit(cache=True, _nrt=False)
def hill_climb(heads, cand, ncand, root_ok, sc, scratch, gl):
    """Climb from `heads` to a local optimum in place; return the tree's score.

    head_score of every head and the bigram scores of the current tree are
    cached (F, B); a move of m from a to b changes only F[a], F[b], F[m] and the
    bigrams at m and m+1, and F[a] without m is the same for every b. With global
    features (gl[0][0] = 1) each move also adds `move_delta`, their exact change.
    Compiled without numba's reference counting (`_nrt=False`; the caller
    passes all scratch arrays, packed in `scratch`: parts, buf, depth, visit, counts,
    F, B, hs, ms; and `gl`: flag (int64[1]), lo, hi, size, G, mark, buf of
    `global_features`): the atomic inc/decrefs around every call took 85% of decoding
    time (perf). sc: the sentence's `Scoring`.
    """
    attrs, w, mask = sc.attrs, sc.w, sc.mask
    parts, buf, depth, visit, counts, F, B, hs, ms = scratch
    glob = gl[0][0] == 1
    lo, hi, size, G, mark, gbuf = gl[1], gl[2], gl[3], gl[4], gl[5], gl[6]
    n1 = heads.shape[0]
    for i in range(n1 + 1):
        F[i] = 0.0
    for i in range(n1 + 2):
        B[i] = 0.0
    for h in range(n1):
        F[h] = head_score(h, heads, sc, parts, buf)
    for m in range(2, n1):
        B[m] = bigram_score(m, heads, sc, buf)
    gtotal = 0.0
    if glob:
        gtotal = scores_into(heads, attrs, w, mask, lo, hi, size, G, gbuf)
    changed = True
    while changed:
        changed = False
        _depths(heads, depth)
        _visit_order(depth, visit, counts)
        for vi in range(n1):
            m = visit[vi]
            if m == 0:
                continue
            a = heads[m]
            if a == 0:
                continue  # the root's child moves only by re-rooting
            root = 1
            while heads[root] != 0:
                root += 1
            best_delta = _EPS
            best_b = -1
            # simple moves: m gets head b
            heads[m] = NO_HEAD
            fa_new = head_score(a, heads, sc, parts, buf)
            old_base = F[a] + F[m] + B[m] + B[m + 1]
            for kk in range(ncand[m]):
                b = cand[m, kk]
                if b == a or _is_descendant(heads, b, m):
                    continue
                new = moved_local(heads, m, b, fa_new, sc, parts, buf)
                delta = new - old_base - F[b]
                if glob:
                    heads[m] = a
                    delta += move_delta(heads, m, b, attrs, w, mask, lo, hi, size, G, mark,
                                        gbuf)
                    heads[m] = NO_HEAD
                if delta > best_delta:
                    best_delta = delta
                    best_b = b
            heads[m] = a
            # re-rooting: m under the root, the old root child under m
            if root_ok[m] and _in_cand(cand, ncand, root, m):
                hs[0] = 0; hs[1] = a; hs[2] = m; hs[3] = root
                ms[0] = m; ms[1] = m + 1; ms[2] = root; ms[3] = root + 1
                old = _distinct_sum(F, hs, 4) + _distinct_sum(B, ms, 4)
                heads[m] = 0
                heads[root] = m
                new = _local(heads, hs, 4, ms, 4, sc, parts, buf)
                if glob:   # two arcs change: the new tree's global score from scratch
                    new += scores_into(heads, attrs, w, mask, lo, hi, size, G, gbuf) - gtotal
                heads[m] = a
                heads[root] = 0
                if glob:
                    scores_into(heads, attrs, w, mask, lo, hi, size, G, gbuf)
                if new - old > best_delta:
                    best_delta = new - old
                    best_b = 0
            if best_b < 0:
                continue
            changed = True
            if best_b > 0:
                heads[m] = best_b
                hs[0] = a; hs[1] = best_b; hs[2] = m; hs[3] = m
                ms[0] = m; ms[1] = m + 1; ms[2] = m; ms[3] = m
            else:
                heads[m] = 0
                heads[root] = m
                hs[0] = 0; hs[1] = a; hs[2] = m; hs[3] = root
                ms[0] = m; ms[1] = m + 1; ms[2] = root; ms[3] = root + 1
            for i in range(4):
                F[hs[i]] = head_score(hs[i], heads, sc, parts, buf)
                if ms[i] < n1:
                    B[ms[i]] = bigram_score(ms[i], heads, sc, buf)
            if glob:
                gtotal = scores_into(heads, attrs, w, mask, lo, hi, size, G, gbuf)
    total = gtotal
    for h in range(n1):
        total += F[h]
    for m in range(2, n1):
        total += B[m]
    return total


@njit(cache=True)
def _tree_hash(heads):
    h = np.uint64(1469598103934665603)
    for i in range(1, heads.shape[0]):
        h = (h ^ np.uint64(heads[i] + 1)) * _TREE_MUL
    return h


@njit(cache=True)
def greedy_chunk(space, sc, state, limits, best_heads, stats, optima, start, glob):
    """Run up to `chunk` restarts, continuing the search recorded in `stats`; limits
    (int64): [max_restarts, converge, chunk]; glob: score the global features. space:
    (cand, ncand, cdf, root_cdf, root_ok), the search space (`search_space.py`); sc: the
    sentence's `Scoring`; optima: (hashes, heads, scores, counts) of the optima seen.

    stats (float64): [best score, restarts done, best restart, since improvement,
    distinct optima]. Local optima are recorded in opt_* (up to their capacity).
    The first restart climbs from `start` when start[0] != -2 (e.g. the
    first-order MST); the others from random trees.
    Returns True when the search is finished (converged or out of restarts).
    """
    cand, ncand, cdf, root_cdf, root_ok = space
    opt_hashes, opt_heads, opt_scores, opt_counts = optima
    n1 = best_heads.shape[0]
    heads = np.empty(n1, dtype=np.int64)
    in_tree = np.empty(n1, dtype=np.bool_)
    order_buf = np.empty(n1, dtype=np.int64)
    parts = np.empty((5 * n1 + 8, 5), dtype=np.int64)
    buf = np.empty(MAX_FEATURES, dtype=np.uint64)
    depth = np.empty(n1, dtype=np.int64)
    visit = np.empty(n1, dtype=np.int64)
    counts = np.empty(n1 + 1, dtype=np.int64)
    F = np.zeros(n1 + 1)
    B = np.zeros(n1 + 2)
    hs = np.empty(4, dtype=np.int64)
    ms = np.empty(4, dtype=np.int64)
    scratch = (parts, buf, depth, visit, counts, F, B, hs, ms)
    gl = global_scratch(n1, glob)
    max_restarts, converge, chunk = limits[0], limits[1], limits[2]
    for _ in range(chunk):
        if stats[1] >= max_restarts or stats[3] >= converge:
            return True
        if stats[1] == 0 and start[0] != -2:
            heads[:] = start
        else:
            sample_tree(cand, ncand, cdf, root_cdf, state, heads, in_tree, order_buf)
        score = hill_climb(heads, cand, ncand, root_ok, sc, scratch, gl)
        stats[1] += 1
        th = _tree_hash(heads)
        nd = np.int64(stats[4])
        found = -1
        for i in range(min(nd, opt_hashes.shape[0])):
            if opt_hashes[i] == th:
                found = i
                break
        if found >= 0:
            opt_counts[found] += 1
        else:
            if nd < opt_hashes.shape[0]:
                opt_hashes[nd] = th
                opt_heads[nd, :] = heads
                opt_scores[nd] = score
                opt_counts[nd] = 1
            stats[4] += 1
        if score > stats[0] + _EPS:
            stats[0] = score
            stats[2] = stats[1]
            stats[3] = 0
            best_heads[:] = heads
        else:
            stats[3] += 1
    return stats[1] >= max_restarts or stats[3] >= converge


def greedy_search(cand, ncand, cdf, root_cdf, root_ok, order, S, attrs, up, w, mask, memo, *,
                  seed_state, restarts, converge, deadline=None, chunk=8, max_optima=256,
                  start=None, global_features=False):
    """Restart loop with a deadline (time.monotonic() value or None); `start`, if
    given, is the tree the first restart climbs from. At most `chunk` restarts per
    kernel call; with a deadline the first call makes one, the next as many as fit a
    quarter of the time left at the pace seen (on a long sentence eight restarts can
    take most of a second: the deadline is overrun by about one restart, not eight).
    The chunking does not change the trees, only where a deadline can cut."""
    n1 = S.shape[0]
    mk, mv, mf = memo
    best = np.full(n1, -1, dtype=np.int64)
    stats = np.array([-np.inf, 0.0, 0.0, 0.0, 0.0])
    cap = max(1, min(max_optima, restarts))
    opt_hashes = np.zeros(cap, dtype=np.uint64)
    opt_heads = np.zeros((cap, n1), dtype=np.int64)
    opt_scores = np.zeros(cap, dtype=np.float64)
    opt_counts = np.zeros(cap, dtype=np.int64)
    optima = (opt_hashes, opt_heads, opt_scores, opt_counts)
    space = (cand, ncand, cdf, root_cdf, root_ok)
    sc = Scoring(int(order), S, attrs, up, w, np.uint64(mask), mk, mv, mf)
    deadline_hit = False
    first = np.full(n1, -2, dtype=np.int64) if start is None else np.asarray(start, np.int64)
    size = chunk if deadline is None else 1
    while True:
        t0 = time.monotonic()
        done = greedy_chunk(space, sc, seed_state, np.array([restarts, converge, size], np.int64),
                            best, stats, optima, first, bool(global_features))
        if done:
            break
        if deadline is not None:
            now = time.monotonic()
            if now >= deadline:
                deadline_hit = True
                break
            pace = (now - t0) / size                    # seconds per restart
            size = chunk if pace <= 0 else int(min(chunk, max(1, (deadline - now) / (4 * pace))))
    k = min(int(stats[4]), cap)
    best[0] = -1
    return GreedyResult(
        heads=best, score=float(stats[0]), restarts=int(stats[1]), best_restart=int(stats[2]),
        distinct_optima=int(stats[4]), deadline_hit=deadline_hit,
        optima=opt_heads[:k], optima_scores=opt_scores[:k], optima_counts=opt_counts[:k])
