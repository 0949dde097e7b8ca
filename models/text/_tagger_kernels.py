"""Numba kernels of the averaged-perceptron tagger (hashing, decoding, one epoch).

Shapes and dtypes, shared by all kernels:
- `tf`: int64 [n + 4, K], per-position word-type feature hashes (crc32 of
  strings), two padding rows on each side (BOS, BOS, ..., EOS, EOS);
- `static_tmpl`: int64 [T1, 2], (offset, type-feature index) templates;
- `pair_tmpl`: int64 [T2, 4], (offset a, feature a, offset b, feature b);
- `rows`: int64 [n, T1 + T2] hashed weight rows of the tag-independent features;
- `W`, `U`: float32 [n_buckets, n_classes] dense weights and averaging
  accumulators (training);
- compact weights (decoding), `row_of, Wc, sp_start, sp_cls, sp_val`: bucket b
  has weights Wc[row_of[b]] if row_of[b] >= 0, none if row_of[b] == -1, and
  otherwise the (class, value) pairs sp_cls[e], sp_val[e] for e in
  [sp_start[s], sp_start[s + 1]) with s = -2 - row_of[b]. Dense weights decode
  through the identity map (row_of = arange, Wc = W, no pairs).
Training is passive-aggressive with lazy averaging (`train_epoch`).
Tag-dependent features (`_tag_rows`) use the two previous predicted classes
(`n_classes` and `n_classes + 1` stand for "before the sentence").
Per-token helpers allocate nothing and run without reference counting
(`_nrt=False`): with it, each call from the token loop pays atomic
increments and decrements for every array argument.
"""
from __future__ import annotations

import numpy as np
from numba import njit

N_TAG_FEATS = 7
LOWER, SUF3 = 1, 8  # type-feature indices used by the tag templates


# one explicit signature: the tag templates call it with literal ids 1001..1007, each
# a compile of its own otherwise
@njit("int64(int64, int64)", cache=True)
def _mix(a, b):
    """64-bit hash combination of two int64 values (wrapping arithmetic)."""
    h = a * 0x5BD1E995 + b + 0x7F4A7C15
    h ^= h >> 29
    h *= 0x27D4EB2F165667C5
    h ^= h >> 32
    return h


@njit(cache=True, _nrt=False)
def _static_row(tf, i, static_tmpl, pair_tmpl, mask, out):
    """out[:T1 + T2] = hashed rows of word i's tag-independent features."""
    t1 = static_tmpl.shape[0]
    for t in range(t1):
        v = tf[i + 2 + static_tmpl[t, 0], static_tmpl[t, 1]]
        out[t] = _mix(t + 1, v) & mask
    for t in range(pair_tmpl.shape[0]):
        a = tf[i + 2 + pair_tmpl[t, 0], pair_tmpl[t, 1]]
        b = tf[i + 2 + pair_tmpl[t, 2], pair_tmpl[t, 3]]
        out[t1 + t] = _mix(t1 + t + 1, _mix(a, b)) & mask


@njit(cache=True)
def static_rows(tf, static_tmpl, pair_tmpl, mask):
    """Hashed rows of the tag-independent features: int64 [n, T1 + T2]."""
    n = tf.shape[0] - 4
    out = np.empty((n, static_tmpl.shape[0] + pair_tmpl.shape[0]), np.int64)
    for i in range(n):
        _static_row(tf, i, static_tmpl, pair_tmpl, mask, out[i])
    return out


@njit(cache=True, _nrt=False)
def _tag_rows(tf, i, p1, p2, n_classes, mask, out):
    """Fill out[:N_TAG_FEATS] with hashed rows of the features of previous tags."""
    w0 = tf[i + 2, LOWER]
    out[0] = _mix(1001, p1) & mask
    out[1] = _mix(1002, p1 * (n_classes + 2) + p2) & mask
    out[2] = _mix(1003, _mix(p1, w0)) & mask
    out[3] = _mix(1004, _mix(p2, w0)) & mask
    out[4] = _mix(1005, _mix(p1, tf[i + 2, SUF3])) & mask
    out[5] = _mix(1006, _mix(p1, tf[i + 3, LOWER])) & mask
    out[6] = _mix(1007, _mix(p1 * (n_classes + 2) + p2, w0)) & mask


@njit(cache=True, _nrt=False)
def _scores(W, rows, n_rows, trows, scores):
    """Dense weights (training): scores = sum of W over rows[:n_rows] and trows."""
    for c in range(scores.shape[0]):
        scores[c] = 0.0
    for r in range(n_rows):
        b = rows[r]
        for c in range(scores.shape[0]):
            scores[c] += W[b, c]
    for r in range(trows.shape[0]):
        b = trows[r]
        for c in range(scores.shape[0]):
            scores[c] += W[b, c]


@njit(cache=True, _nrt=False)
def _lookup(row_of, rows, i, trows, ks):
    """ks[:T] = row_of of the buckets rows[i] then trows. Looked up together
    before any addition, so that the cache misses overlap."""
    n_rows = rows.shape[1]
    for r in range(n_rows):
        ks[r] = row_of[rows[i, r]]
    for r in range(trows.shape[0]):
        ks[n_rows + r] = row_of[trows[r]]


@njit(cache=True, _nrt=False)
def _compact_scores(ks, Wc, sp_start, sp_cls, sp_val, out, j):
    """out[j] = sum of the compact weights of the rows ks (`row_of` values), in
    order: the additions of the dense sum minus its zeros, so the same floats."""
    nc = out.shape[1]
    for c in range(nc):
        out[j, c] = 0.0
    for r in range(ks.shape[0]):
        k = ks[r]
        if k >= 0:
            for c in range(nc):
                out[j, c] += Wc[k, c]
        elif k < -1:
            s = -2 - k
            for e in range(sp_start[s], sp_start[s + 1]):
                out[j, sp_cls[e]] += sp_val[e]


@njit(cache=True, _nrt=False)
def _argmax_row(out, j):
    """Index of the first maximum of out[j] (as np.argmax)."""
    best = 0
    for c in range(1, out.shape[1]):
        if out[j, c] > out[j, best]:
            best = c
    return best


@njit(cache=True)
def decode(tf, rows, row_of, Wc, sp_start, sp_cls, sp_val, mask):
    """Greedy left-to-right classes: int64 [n]."""
    n = rows.shape[0]
    n_classes = Wc.shape[1]
    out = np.empty(n, np.int64)
    scores = np.empty((1, n_classes), np.float32)
    trows = np.empty(N_TAG_FEATS, np.int64)
    ks = np.empty(rows.shape[1] + N_TAG_FEATS, np.int32)
    p1, p2 = n_classes, n_classes + 1
    for i in range(n):
        _tag_rows(tf, i, p1, p2, n_classes, mask, trows)
        _lookup(row_of, rows, i, trows, ks)
        _compact_scores(ks, Wc, sp_start, sp_cls, sp_val, scores, 0)
        best = _argmax_row(scores, 0)
        out[i] = best
        p2, p1 = p1, best
    return out


@njit(cache=True)
def train_epoch(tf_all, tf_start, gold_all, order, static_tmpl, pair_tmpl, W, U, step, mask):
    """One passive-aggressive (PA) sweep over sentences in `order`; returns
    (step, errors), errors counting argmax mistakes.

    Sentence s has type features tf_all[tf_start[s]:tf_start[s+1]] (two padding rows
    on each side) and gold classes gold_all[tf_start[s] - 4 * s:][:n]. Each word's
    feature rows are hashed here, as `static_rows` would, instead of being stored for
    the whole treebank: 680 bytes a word that a 50,000-sentence treebank held in GBs.
    At each token the class v != gold with the highest score + 1 is the
    violator; if it scores within a margin of 1 of the gold class, the gold
    class's weights of the token's features rise and v's fall by
    tau = (score[v] + 1 - score[gold]) / (2 * n_features), the smallest step
    that gives the margin (Crammer et al. 2006, PA with C = infinity; a cap C
    in 0.1..1 never bound on en_ewt). Perceptron updates (+-1 on errors only)
    gave 0.06 UPOS / 0.1 XPOS less on en_ewt dev.
    Lazy averaging: the averaged weights are W - U / step.
    """
    n_classes = W.shape[1]
    scores = np.empty(n_classes, np.float32)
    rows = np.empty(static_tmpl.shape[0] + pair_tmpl.shape[0], np.int64)
    trows = np.empty(N_TAG_FEATS, np.int64)
    errors = 0
    for k in range(order.shape[0]):
        s = order[k]
        tf = tf_all[tf_start[s]:tf_start[s + 1]]
        a = tf_start[s] - 4 * s
        n = tf.shape[0] - 4
        p1, p2 = n_classes, n_classes + 1
        for i in range(n):
            _static_row(tf, i, static_tmpl, pair_tmpl, mask, rows)
            _tag_rows(tf, i, p1, p2, n_classes, mask, trows)
            _scores(W, rows, rows.shape[0], trows, scores)
            pred = np.argmax(scores)
            gold = gold_all[a + i]
            if pred != gold:
                errors += 1
            viol, loss = 0, 0.0
            if n_classes > 1:              # one class has no violator, nothing to learn
                viol = 0 if gold != 0 else 1
                for c in range(n_classes):
                    if c != gold and scores[c] > scores[viol]:
                        viol = c
                loss = scores[viol] + 1.0 - scores[gold]
            if loss > 0.0:
                tau = loss / (2.0 * (rows.shape[0] + trows.shape[0]))
                for r in range(rows.shape[0]):
                    b = rows[r]
                    W[b, gold] += tau
                    W[b, viol] -= tau
                    U[b, gold] += step * tau
                    U[b, viol] -= step * tau
                for r in range(trows.shape[0]):
                    b = trows[r]
                    W[b, gold] += tau
                    W[b, viol] -= tau
                    U[b, gold] += step * tau
                    U[b, viol] -= step * tau
            step += 1
            p2, p1 = p1, pred  # history of predicted tags, as at test time
    return step, errors


@njit(cache=True)
def decode_scores(tf, rows, row_of, Wc, sp_start, sp_cls, sp_val, mask):
    """Greedy left-to-right decoding; float32 [n, n_classes] scores at each step."""
    n = rows.shape[0]
    n_classes = Wc.shape[1]
    out = np.empty((n, n_classes), np.float32)
    trows = np.empty(N_TAG_FEATS, np.int64)
    ks = np.empty(rows.shape[1] + N_TAG_FEATS, np.int32)
    p1, p2 = n_classes, n_classes + 1
    for i in range(n):
        _tag_rows(tf, i, p1, p2, n_classes, mask, trows)
        _lookup(row_of, rows, i, trows, ks)
        _compact_scores(ks, Wc, sp_start, sp_cls, sp_val, out, i)
        best = _argmax_row(out, i)
        p2, p1 = p1, best
    return out
