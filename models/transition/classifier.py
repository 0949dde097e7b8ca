"""Multiclass logistic regression over hashed features, trained with AdaGrad
(Choi & McCallum 2013, Algorithm 2; Duchi et al. 2011).

Weights are a dense float32 table W of shape (n_rows, n_actions): a feature is a row
index (see `features.extract`), an action a column. The score of action a is the sum
of W[rows, a]; probabilities are a softmax over the *valid* actions only, so the
margin of the decoder compares two moves the parser could actually make.

AdaGrad step on one example (x = rows, y = gold action), for each valid action a:
    g_a = [a == y] - P(a | x);  G[r, a] += g_a^2;  W[r, a] += alpha * g_a / (rho + sqrt(G[r, a]))
Updates with |g_a| < eps are skipped (they are tiny and skipping keeps W sparse,
which the compressed model file relies on).

Decoding reads compact weights (`compact`): a loaded model does not hold the dense
2^20 x A table (444 MB for en_ewt) but a row map `row_of` (int32, one per row: k >= 0
for dense row Wc[k], -1 for an all-zero row, k <= -2 for the (action, value) pairs
packed in sp[e] = action << 16 | float16 bits of the value (read through the table
F16), for e = -2 - k, ... up to the first END). Rows with more than A/8 non-zeros are
dense, the others pairs (one uint32 array: one cache miss per row, not one per array).
`compact_probabilities` adds the same non-zero floats in the same order as
`probabilities` over the dense W, so both give bit-identical results. Dense W
(training) decodes through the identity map.
"""
from __future__ import annotations

import logging
import math

import numpy as np
from numba import njit

logger = logging.getLogger(__name__)


@njit(cache=True, _nrt=False)
def _softmax_valid(out, valid):
    """Turn the scores out[a] into probabilities over the valid actions in place (0 for
    invalid ones); return the best valid action, or -1 when none is valid."""
    A = out.shape[0]
    best = -1
    top = -1e300
    for a in range(A):
        if valid[a] and out[a] > top:
            top = out[a]
            best = a
    if best < 0:
        return -1
    z = 0.0
    for a in range(A):
        if valid[a]:
            e = math.exp(out[a] - top)
            out[a] = e
            z += e
        else:
            out[a] = 0.0
    for a in range(A):
        out[a] /= z
    return best


@njit(cache=True, _nrt=False)
def probabilities(W, rows, valid, out):
    """out[a] = P(a | rows) over the valid actions (0 for invalid ones).

    W: float32 (R, A); rows: int64 (T,); valid: bool (A,); out: float64 (A,).
    Returns the best valid action, or -1 when none is valid.
    """
    A = W.shape[1]
    for a in range(A):
        out[a] = 0.0
    for t in range(rows.shape[0]):
        r = rows[t]
        for a in range(A):
            out[a] += W[r, a]
    return _softmax_valid(out, valid)


# float32 value of every float16 bit pattern (the stored weights are float16)
F16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
END = np.uint32(0xFFFFFFFF)  # ends the pairs of a row (no pair has action 0xFFFF)


def identity_weights(W):
    """Compact weights (row_of, Wc, sp) that read the dense W."""
    return np.arange(W.shape[0], dtype=np.int32), W, np.full(1, END, np.uint32)


def compact(gaps, values, n_rows, n_actions):
    """Compact weights (row_of, Wc, sp) of the table W.flat[idx] = values, idx the
    running sums of gaps (uint32, increasing idx, as in the model file), values float16
    (zeros are dropped); see the module doc. One numba pass, no large temporaries."""
    assert n_actions < 1 << 16 and values.dtype == np.float16
    gaps = np.ascontiguousarray(gaps, dtype=np.uint32)
    bits = np.ascontiguousarray(values).view(np.uint16)
    n_dense, n_sp = _compact_sizes(gaps, bits, n_actions)
    assert n_sp < 1 << 31
    row_of = np.full(n_rows, -1, np.int32)
    Wc = np.zeros((n_dense, n_actions), np.float32)
    sp = np.full(n_sp, END, np.uint32)
    _compact_fill(gaps, bits, n_actions, F16, row_of, Wc, sp)
    return row_of, Wc, sp


def sparse_weights(W, block_rows: int = 1 << 15):
    """(gaps, float16 values) of the non-zero weights of the dense W, as the model file
    keeps them (`compact` reads them): the snapshot training keeps of its best weights,
    6 bytes a weight (12M weights: 70 MB against a 2**20 x 102 table's 428). Read
    block_rows rows at a time, so that no temporary is the size of W."""
    flat = W.reshape(-1)
    assert flat.size < 1 << 32
    step = block_rows * W.shape[1]
    idx, vals = [], []
    for start in range(0, flat.size, step):
        chunk = flat[start:start + step]
        nz = np.flatnonzero(chunk)
        idx.append(nz.astype(np.uint32) + np.uint32(start))
        vals.append(chunk[nz].astype(np.float16))
    gaps = np.concatenate(idx)
    del idx
    gaps[1:] -= gaps[:-1].copy()
    return gaps, np.concatenate(vals)


# one explicit signature: called with literal zeros and int64 (two compiles otherwise)
@njit("UniTuple(int64, 3)(uint32[::1], uint16[::1], int64, int64, int64)", cache=True)
def _row_run(gaps, bits, i, flat, A):
    """The run of entries i.. in the row of entry i: (end j, flat index of entry j-1,
    non-zero entries in the run)."""
    r = (flat + gaps[i]) // A
    j = i
    f = flat
    cnt = 0
    while j < gaps.shape[0]:
        fj = f + gaps[j]
        if fj // A != r:
            break
        f = fj
        if bits[j] & 0x7FFF:
            cnt += 1
        j += 1
    return j, f, cnt


@njit(cache=True)
def _compact_sizes(gaps, bits, A):
    """(dense rows, uint32 entries of sp) of `compact`."""
    n_dense = 0
    n_sp = 0
    i = 0
    flat = 0
    while i < gaps.shape[0]:
        j, f, cnt = _row_run(gaps, bits, i, flat, A)
        if cnt > A // 8:
            n_dense += 1
        elif cnt > 0:
            n_sp += cnt + 1
        i, flat = j, f
    return n_dense, n_sp


@njit(cache=True)
def _compact_fill(gaps, bits, A, f16, row_of, Wc, sp):
    """Fill row_of, Wc and sp as sized by `_compact_sizes`."""
    k = 0
    e = 0
    i = 0
    flat = 0
    while i < gaps.shape[0]:
        j, f, cnt = _row_run(gaps, bits, i, flat, A)
        if cnt > 0:
            r = (flat + gaps[i]) // A
            if cnt > A // 8:
                row_of[r] = k
            else:
                row_of[r] = -2 - e
            g = flat
            for q in range(i, j):
                g += gaps[q]
                if bits[q] & 0x7FFF:
                    c = g - r * A
                    if cnt > A // 8:
                        Wc[k, c] = f16[bits[q]]
                    else:
                        sp[e] = (np.uint32(c) << np.uint32(16)) | np.uint32(bits[q])
                        e += 1
            if cnt > A // 8:
                k += 1
            else:
                e += 1  # END, already in sp
        i, flat = j, f


def flat_weights(row_of, Wc, sp):
    """Inverse of `compact`: (sorted flat indices int64, float32 values) of the
    non-zero weights."""
    A = Wc.shape[1]
    drows = np.flatnonzero(row_of >= 0)
    block = Wc[row_of[drows]]
    r, c = np.nonzero(block)
    flat = [drows[r].astype(np.int64) * A + c]
    vals = [block[r, c]]
    # pair e belongs to the sparse row whose pairs begin last at or before e
    srows = np.flatnonzero(row_of < -1)
    first = -2 - row_of[srows].astype(np.int64)
    order = np.argsort(first)
    srows, first = srows[order], first[order]
    pairs = np.flatnonzero(sp != END)
    owner = srows[np.searchsorted(first, pairs, side="right") - 1] if pairs.size else pairs
    flat.append(owner.astype(np.int64) * A + (sp[pairs] >> 16))
    vals.append(F16[sp[pairs] & 0xFFFF])
    flat, vals = np.concatenate(flat), np.concatenate(vals).astype(np.float32)
    order = np.argsort(flat, kind="stable")
    keep = vals[order] != 0
    return flat[order][keep], vals[order][keep]


@njit(cache=True, _nrt=False)
def compact_probabilities(row_of, Wc, sp, rows, valid, out):
    """`probabilities` over compact weights (same floats added in the same order).

    rows is overwritten with its row_of values: they are all looked up before any
    addition, so that their cache misses overlap. (Fewer array arguments: each
    costs the dispatcher a type check per call from Python.)"""
    A = out.shape[0]
    T = rows.shape[0]
    for t in range(T):
        rows[t] = row_of[rows[t]]
    for a in range(A):
        out[a] = 0.0
    for t in range(T):
        k = rows[t]
        if k >= 0:
            for a in range(A):
                out[a] += Wc[k, a]
        elif k < -1:
            e = -2 - k
            v = sp[e]
            while v != 0xFFFFFFFF:
                out[v >> 16] += F16[v & 0xFFFF]
                e += 1
                v = sp[e]
    return _softmax_valid(out, valid)


@njit(cache=True, _nrt=False)
def pack_bits(flags, out):
    """out uint8 [ceil(len(flags) / 8)]: flag a as bit a % 8 of byte a // 8 (numpy's
    packbits with bitorder 'little'). The valid moves of a training instance: 111
    flags of en_ewt in 14 bytes instead of 111."""
    for b in range(out.shape[0]):
        out[b] = 0
    for a in range(flags.shape[0]):
        if flags[a]:
            out[a >> 3] |= np.uint8(1 << (a & 7))


@njit(cache=True, _nrt=False)
def bit(V, e, a):
    """Flag a of row e of bits packed by `pack_bits`."""
    return (V[e, a >> 3] >> (a & 7)) & 1


@njit(cache=True, _nrt=False)
def adagrad_epoch(W, G, X, y, V, order, alpha, rho, eps, p):
    """One pass of AdaGrad over examples X[order] (rows int32 (N, T)), gold y (N,),
    valid moves V uint8 (N, ceil(A / 8)) packed by `pack_bits`. p: float64 (A,) scratch.
    Returns (log-loss sum, correct)."""
    loss = 0.0
    correct = 0
    T = X.shape[1]
    A = W.shape[1]
    for q in range(order.shape[0]):
        e = order[q]
        # scores
        for a in range(A):
            p[a] = 0.0
        for t in range(T):
            r = X[e, t]
            for a in range(A):
                p[a] += W[r, a]
        top = -1e300
        best = -1
        for a in range(A):
            if bit(V, e, a) and p[a] > top:
                top = p[a]
                best = a
        z = 0.0
        for a in range(A):
            if bit(V, e, a):
                p[a] = math.exp(p[a] - top)
                z += p[a]
            else:
                p[a] = 0.0
        gold = y[e]
        if best == gold:
            correct += 1
        loss -= math.log(max(p[gold] / z, 1e-300))
        for a in range(A):
            if not bit(V, e, a):
                continue
            g = (1.0 if a == gold else 0.0) - p[a] / z
            if abs(g) < eps:
                continue
            g2 = g * g
            for t in range(T):
                r = X[e, t]
                G[r, a] += g2
                W[r, a] += alpha * g / (rho + math.sqrt(G[r, a]))
    return loss, correct
