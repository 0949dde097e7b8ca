"""Numba kernels of the averaged-perceptron tagger (hashing, decoding, one epoch).

Shapes and dtypes, shared by all kernels:
- `tf`: int64 [n + 4, K], per-position word-type feature hashes (crc32 of
  strings), two padding rows on each side (BOS, BOS, ..., EOS, EOS);
- `static_tmpl`: int64 [T1, 2], (offset, type-feature index) templates;
- `pair_tmpl`: int64 [T2, 4], (offset a, feature a, offset b, feature b);
- `rows`: int64 [n, T1 + T2] hashed weight rows of the tag-independent features;
- `W`, `U`: float32 [n_buckets, n_classes] weights and averaging accumulators.
Tag-dependent features (`_tag_rows`) use the two previous predicted classes
(`n_classes` and `n_classes + 1` stand for "before the sentence").
"""
from __future__ import annotations

import numpy as np
from numba import njit

N_TAG_FEATS = 7
LOWER, SUF3 = 1, 8  # type-feature indices used by the tag templates


@njit(cache=True)
def _mix(a, b):
    """64-bit hash combination of two int64 values (wrapping arithmetic)."""
    h = a * 0x5BD1E995 + b + 0x7F4A7C15
    h ^= h >> 29
    h *= 0x27D4EB2F165667C5
    h ^= h >> 32
    return h


@njit(cache=True)
def static_rows(tf, static_tmpl, pair_tmpl, mask):
    """Hashed rows of the tag-independent features: int64 [n, T1 + T2]."""
    n = tf.shape[0] - 4
    t1 = static_tmpl.shape[0]
    t2 = pair_tmpl.shape[0]
    out = np.empty((n, t1 + t2), np.int64)
    for i in range(n):
        for t in range(t1):
            v = tf[i + 2 + static_tmpl[t, 0], static_tmpl[t, 1]]
            out[i, t] = _mix(t + 1, v) & mask
        for t in range(t2):
            a = tf[i + 2 + pair_tmpl[t, 0], pair_tmpl[t, 1]]
            b = tf[i + 2 + pair_tmpl[t, 2], pair_tmpl[t, 3]]
            out[i, t1 + t] = _mix(t1 + t + 1, _mix(a, b)) & mask
    return out


@njit(cache=True)
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


@njit(cache=True)
def _scores(W, rows, n_rows, trows, scores):
    scores[:] = 0.0
    for r in range(n_rows):
        b = rows[r]
        for c in range(scores.shape[0]):
            scores[c] += W[b, c]
    for r in range(trows.shape[0]):
        b = trows[r]
        for c in range(scores.shape[0]):
            scores[c] += W[b, c]


@njit(cache=True)
def decode(tf, rows, W, mask):
    """Greedy left-to-right classes: int64 [n]."""
    n = rows.shape[0]
    n_classes = W.shape[1]
    out = np.empty(n, np.int64)
    scores = np.empty(n_classes, np.float32)
    trows = np.empty(N_TAG_FEATS, np.int64)
    p1, p2 = n_classes, n_classes + 1
    for i in range(n):
        _tag_rows(tf, i, p1, p2, n_classes, mask, trows)
        _scores(W, rows[i], rows.shape[1], trows, scores)
        best = np.argmax(scores)
        out[i] = best
        p2, p1 = p1, best
    return out


@njit(cache=True)
def train_epoch(tf_all, tf_start, rows_all, row_start, gold_all, order, W, U, step, mask):
    """One perceptron sweep over sentences in `order`; returns (step, errors).

    Sentence s has type features tf_all[tf_start[s]:tf_start[s+1]] (with padding),
    rows rows_all[row_start[s]:row_start[s+1]] and gold classes gold_all[same].
    Lazy averaging: the averaged weights are W - U / step.
    """
    n_classes = W.shape[1]
    scores = np.empty(n_classes, np.float32)
    trows = np.empty(N_TAG_FEATS, np.int64)
    errors = 0
    for k in range(order.shape[0]):
        s = order[k]
        tf = tf_all[tf_start[s]:tf_start[s + 1]]
        a = row_start[s]
        n = row_start[s + 1] - a
        p1, p2 = n_classes, n_classes + 1
        for i in range(n):
            rows = rows_all[a + i]
            _tag_rows(tf, i, p1, p2, n_classes, mask, trows)
            _scores(W, rows, rows.shape[0], trows, scores)
            pred = np.argmax(scores)
            gold = gold_all[a + i]
            if pred != gold:
                errors += 1
                for r in range(rows.shape[0]):
                    b = rows[r]
                    W[b, gold] += 1.0
                    W[b, pred] -= 1.0
                    U[b, gold] += step
                    U[b, pred] -= step
                for r in range(trows.shape[0]):
                    b = trows[r]
                    W[b, gold] += 1.0
                    W[b, pred] -= 1.0
                    U[b, gold] += step
                    U[b, pred] -= step
            step += 1
            p2, p1 = p1, pred  # history of predicted tags, as at test time
    return step, errors


@njit(cache=True)
def decode_scores(tf, rows, W, mask):
    """Greedy left-to-right decoding; float32 [n, n_classes] scores at each step."""
    n = rows.shape[0]
    n_classes = W.shape[1]
    out = np.empty((n, n_classes), np.float32)
    trows = np.empty(N_TAG_FEATS, np.int64)
    p1, p2 = n_classes, n_classes + 1
    for i in range(n):
        _tag_rows(tf, i, p1, p2, n_classes, mask, trows)
        _scores(W, rows[i], rows.shape[1], trows, out[i])
        best = np.argmax(out[i])
        p2, p1 = p1, best
    return out
