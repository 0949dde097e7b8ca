"""Hashed feature templates of the graph parser's parts (numba kernels).

Templates follow MSTParser / TurboParser / RBGParser (McDonald et al. 2005,
Martins et al. 2013, Lei et al. 2014): word, lemma (or Brown cluster, the
`A_CLASS` column of `encode`), UPOS and XPOS of the words of a part, surrounding
and in-between tags, direction and binned distance. Each feature is a 64-bit hash
of (template id, values); callers mask it into a fixed-size weight array. They
are written as code, not parsed from data, so that the compiler can inline them;
`FEATURE_SET` names the version stored in model files.

Compile time: the part kernels here have one explicit signature each (`_SIG_*`:
attrs uint64 (n+1, N_ATTRS) C-contiguous, positions int64, out uint64
(MAX_FEATURES,)), so numba compiles each once, when this module is imported (or
loads it from its cache), and converts the callers' int32 positions and literal
constants, instead of compiling one specialisation per mix of argument types (14
of `sib_features`: the feature kernels were over half of a cold start's compile
time, bench/journal/13-cold-start.md "Cold start"). `fhash` is called, not inlined by numba
(LLVM still inlines it): inlined, or specialised for each literal template id,
its ~40 uses made `arc_features` alone take 6-9 s to compile.

Parts (`PART_*`), a part being up to 4 token positions (a, b, c, d):
  ARC      (h, m)            first order
  SIB_L/R  (h, s, m)         consecutive siblings on one side; s == h marks the
                             first child, m == h marks "no further child"
  GRAND    (g, h, m)         grandparent
  GSIB     (g, h, s, m)      grand-sibling (third order)
  TRISIB   (h, t, s, m)      tri-sibling (third order); t == h / s == h mark
                             missing inner siblings
  BIGRAM   (m, h1, h2)       head bigram: heads h1 of m-1 and h2 of m
  VALENCY  (h, side, k)      h has k (capped at 7) children on one side
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .encode import A_CLASS, A_SUFFIX, A_UPOS, A_WORD, A_XPOS, N_UPOS

FEATURE_SET = "graph-v2"
MAX_FEATURES = 128  # upper bound of features written for any one part (arc: 2 * (36 + 19) + 1)

(PART_ARC, PART_SIB_L, PART_SIB_R, PART_GRAND, PART_GSIB, PART_TRISIB, PART_BIGRAM,
 PART_VALENCY) = range(8)
MAX_VALENCY = 7

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_S31 = np.uint64(31)
_S27 = np.uint64(27)

START = np.uint64(0x51A27)      # attribute value of the "first child" marker
END = np.uint64(0xE4D)          # attribute value of the "no more children" marker
OUTSIDE = np.uint64(0xB0DA)     # attribute value of positions outside the sentence


@njit(cache=True, inline="always")
def _mix(h, v):
    h = (h ^ v) * _M1
    return h ^ (h >> _S31)


# signatures (see the module docstring): uint64 attribute table, int64 positions
_ATTRS, _OUT = "uint64[:, ::1]", "uint64[::1]"
_SIG_FHASH = "uint64(int64, uint64, uint64, uint64, uint64, uint64)"
_SIG_ARC = f"int64({_ATTRS}, int32[:, ::1], int64, int64, {_OUT}, int64)"
_SIG_3 = f"int64({_ATTRS}, int64, int64, int64, {_OUT}, int64)"       # 3 ints + k
_SIG_4 = f"int64({_ATTRS}, int64, int64, int64, int64, {_OUT}, int64)"  # 4 ints + k
_SIG_PART = f"int64({_ATTRS}, int32[:, ::1], int64, int64, int64, int64, int64, {_OUT})"


@njit(_SIG_FHASH, cache=True)
def fhash(t, a, b, c, d, e):
    """Hash of template id t and up to five values (unused ones 0)."""
    h = _mix(np.uint64(t) * _M2, a)
    h = _mix(h, b)
    h = _mix(h, c)
    h = _mix(h, d)
    h = _mix(h, e)
    return h ^ (h >> _S27)


@njit(cache=True, inline="always")
def _dist_bin(a, b):
    """Direction and binned distance of a -> b as one small code."""
    d = b - a
    right = 0
    if d > 0:
        right = 1
    else:
        d = -d
    if d <= 5:
        k = d
    elif d <= 10:
        k = 6
    elif d <= 20:
        k = 7
    else:
        k = 8
    return np.uint64(right * 16 + k + 1)


@njit(cache=True, inline="always")
def _at(attrs, i, col):
    if i < 0 or i >= attrs.shape[0]:
        return OUTSIDE
    return attrs[i, col]


@njit(_SIG_ARC, cache=True, _nrt=False)
def arc_features(attrs, upos_prefix, h, m, out, k):
    """Write the features of arc h -> m into out[k:], return the new k.

    Each base template is emitted twice: alone and conjoined with direction and
    binned distance (McDonald et al. 2005, Section 3.1).
    """
    db = _dist_bin(h, m)
    hw = attrs[h, A_WORD]
    hp = attrs[h, A_UPOS]
    hx = attrs[h, A_XPOS]
    hl = attrs[h, A_CLASS]
    mw = attrs[m, A_WORD]
    mp = attrs[m, A_UPOS]
    mx = attrs[m, A_XPOS]
    ml = attrs[m, A_CLASS]
    z = np.uint64(0)
    base = k
    out[k] = fhash(1, hw, hp, z, z, z); k += 1
    out[k] = fhash(2, hw, z, z, z, z); k += 1
    out[k] = fhash(3, hp, z, z, z, z); k += 1
    out[k] = fhash(4, hx, z, z, z, z); k += 1
    out[k] = fhash(5, mw, mp, z, z, z); k += 1
    out[k] = fhash(6, mw, z, z, z, z); k += 1
    out[k] = fhash(7, mp, z, z, z, z); k += 1
    out[k] = fhash(8, mx, z, z, z, z); k += 1
    out[k] = fhash(9, hw, hp, mw, mp, z); k += 1
    out[k] = fhash(10, hp, mw, mp, z, z); k += 1
    out[k] = fhash(11, hw, mw, mp, z, z); k += 1
    out[k] = fhash(12, hw, hp, mp, z, z); k += 1
    out[k] = fhash(13, hw, hp, mw, z, z); k += 1
    out[k] = fhash(14, hw, mw, z, z, z); k += 1
    out[k] = fhash(15, hp, mp, z, z, z); k += 1
    out[k] = fhash(16, hx, mx, z, z, z); k += 1
    out[k] = fhash(17, hl, ml, z, z, z); k += 1
    out[k] = fhash(18, hl, mp, z, z, z); k += 1
    out[k] = fhash(19, hp, ml, z, z, z); k += 1
    out[k] = fhash(20, hx, mw, z, z, z); k += 1
    out[k] = fhash(21, hw, mx, z, z, z); k += 1
    # surrounding tags (McDonald et al. 2005, Table 1c)
    hp1 = _at(attrs, h + 1, A_UPOS)
    hm1 = _at(attrs, h - 1, A_UPOS)
    mp1 = _at(attrs, m + 1, A_UPOS)
    mm1 = _at(attrs, m - 1, A_UPOS)
    out[k] = fhash(22, hp, hp1, mm1, mp, z); k += 1
    out[k] = fhash(23, hm1, hp, mm1, mp, z); k += 1
    out[k] = fhash(24, hp, hp1, mp, mp1, z); k += 1
    out[k] = fhash(25, hm1, hp, mp, mp1, z); k += 1
    hx1 = _at(attrs, h + 1, A_XPOS)
    hxm1 = _at(attrs, h - 1, A_XPOS)
    mx1 = _at(attrs, m + 1, A_XPOS)
    mxm1 = _at(attrs, m - 1, A_XPOS)
    out[k] = fhash(26, hx, hx1, mxm1, mx, z); k += 1
    out[k] = fhash(27, hxm1, hx, mxm1, mx, z); k += 1
    out[k] = fhash(28, hx, hx1, mx, mx1, z); k += 1
    out[k] = fhash(29, hxm1, hx, mx, mx1, z); k += 1
    out[k] = fhash(30, hp, mp, hp1, z, z); k += 1
    out[k] = fhash(31, hp, mp, mm1, z, z); k += 1
    out[k] = fhash(32, hp, mp, mp1, z, z); k += 1
    out[k] = fhash(33, hp, mp, hm1, z, z); k += 1
    # 3-letter suffixes: a back-off for rare words
    hs = attrs[h, A_SUFFIX]
    ms = attrs[m, A_SUFFIX]
    out[k] = fhash(36, hp, ms, mp, z, z); k += 1
    out[k] = fhash(37, hs, hp, mp, z, z); k += 1
    out[k] = fhash(38, hs, ms, z, z, z); k += 1
    # tags strictly between h and m (McDonald et al. 2005, Table 1b)
    lo = min(h, m) + 1
    hi = max(h, m)
    if hi > lo:
        for t in range(N_UPOS):
            if upos_prefix[hi, t] - upos_prefix[lo, t] > 0:
                out[k] = fhash(34, hp, np.uint64(t), mp, z, z); k += 1
    end = k
    for i in range(base, end):
        out[k] = _mix(out[i], db); k += 1
    out[k] = fhash(35, db, z, z, z, z); k += 1
    return k


@njit(cache=True, inline="always")
def _marked(attrs, pos, head, col, marker):
    """Attribute of position pos, or `marker` where pos == head (a marker slot)."""
    if pos == head:
        return marker
    return attrs[pos, col]


@njit(_SIG_4, cache=True, _nrt=False)
def sib_features(attrs, h, s, m, right, out, k):
    """Consecutive-sibling part (h, s, m) on one side (McDonald & Pereira 2006)."""
    d = np.uint64(right + 1)
    hp = attrs[h, A_UPOS]
    hw = attrs[h, A_WORD]
    hx = attrs[h, A_XPOS]
    sp = _marked(attrs, s, h, A_UPOS, START)
    sw = _marked(attrs, s, h, A_WORD, START)
    sx = _marked(attrs, s, h, A_XPOS, START)
    mp = _marked(attrs, m, h, A_UPOS, END)
    mw = _marked(attrs, m, h, A_WORD, END)
    mx = _marked(attrs, m, h, A_XPOS, END)
    z = np.uint64(0)
    sb = z
    if s != h and m != h:
        sb = _dist_bin(s, m)
    out[k] = fhash(101, hp, sp, mp, d, z); k += 1
    out[k] = fhash(102, sp, mp, d, z, z); k += 1
    out[k] = fhash(103, sw, mp, d, z, z); k += 1
    out[k] = fhash(104, sp, mw, d, z, z); k += 1
    out[k] = fhash(105, sw, mw, d, z, z); k += 1
    out[k] = fhash(106, hp, sp, mp, sb, d); k += 1
    out[k] = fhash(107, hw, sp, mp, d, z); k += 1
    out[k] = fhash(108, hp, sw, mp, d, z); k += 1
    out[k] = fhash(109, hp, sp, mw, d, z); k += 1
    out[k] = fhash(110, hx, sx, mx, d, z); k += 1
    out[k] = fhash(111, hw, mw, d, z, z); k += 1
    out[k] = fhash(112, hp, mp, d, z, z); k += 1
    return k


@njit(_SIG_3, cache=True, _nrt=False)
def grand_features(attrs, g, h, m, out, k):
    """Grandparent part (g, h, m) (Koo & Collins 2010)."""
    d1 = _dist_bin(g, h)
    d2 = _dist_bin(h, m)
    dd = d1 * np.uint64(64) + d2
    gp = attrs[g, A_UPOS]
    gw = attrs[g, A_WORD]
    gx = attrs[g, A_XPOS]
    hp = attrs[h, A_UPOS]
    hw = attrs[h, A_WORD]
    hx = attrs[h, A_XPOS]
    mp = attrs[m, A_UPOS]
    mw = attrs[m, A_WORD]
    mx = attrs[m, A_XPOS]
    gl = attrs[g, A_CLASS]
    ml = attrs[m, A_CLASS]
    z = np.uint64(0)
    out[k] = fhash(201, gp, hp, mp, z, z); k += 1
    out[k] = fhash(202, gp, hp, mp, dd, z); k += 1
    out[k] = fhash(203, gp, mp, z, z, z); k += 1
    out[k] = fhash(204, gw, mp, z, z, z); k += 1
    out[k] = fhash(205, gp, mw, z, z, z); k += 1
    out[k] = fhash(206, gw, hp, mp, z, z); k += 1
    out[k] = fhash(207, gp, hw, mp, z, z); k += 1
    out[k] = fhash(208, gp, hp, mw, z, z); k += 1
    out[k] = fhash(209, gx, hx, mx, z, z); k += 1
    out[k] = fhash(210, gx, hx, mx, dd, z); k += 1
    out[k] = fhash(211, gl, ml, z, z, z); k += 1
    out[k] = fhash(212, gp, mp, dd, z, z); k += 1
    # lexical triples for attachment through function words (e.g. verb - "on" - noun)
    hl = attrs[h, A_CLASS]
    out[k] = fhash(213, gl, hw, ml, z, z); k += 1
    out[k] = fhash(214, gp, hw, ml, z, z); k += 1
    out[k] = fhash(215, gl, hw, mp, z, z); k += 1
    out[k] = fhash(216, gp, hl, mp, dd, z); k += 1
    return k


@njit(_SIG_4, cache=True, _nrt=False)
def gsib_features(attrs, g, h, s, m, out, k):
    """Grand-sibling part (g, h, s, m) (Koo & Collins 2010, model 2)."""
    d = np.uint64(1 + (m > h))
    gp = attrs[g, A_UPOS]
    gw = attrs[g, A_WORD]
    hp = attrs[h, A_UPOS]
    sp = _marked(attrs, s, h, A_UPOS, START)
    sw = _marked(attrs, s, h, A_WORD, START)
    mp = attrs[m, A_UPOS]
    mw = attrs[m, A_WORD]
    gx = attrs[g, A_XPOS]
    hx = attrs[h, A_XPOS]
    sx = _marked(attrs, s, h, A_XPOS, START)
    mx = attrs[m, A_XPOS]
    z = np.uint64(0)
    out[k] = fhash(301, gp, hp, sp, mp, d); k += 1
    out[k] = fhash(302, gp, sp, mp, d, z); k += 1
    out[k] = fhash(303, gw, hp, sp, mp, d); k += 1
    out[k] = fhash(304, gp, hp, sw, mp, d); k += 1
    out[k] = fhash(305, gp, hp, sp, mw, d); k += 1
    out[k] = fhash(306, gx, hx, sx, mx, d); k += 1
    return k


@njit(_SIG_4, cache=True, _nrt=False)
def trisib_features(attrs, h, t, s, m, out, k):
    """Tri-sibling part (h, t, s, m) (Koo & Collins 2010, model 2)."""
    d = np.uint64(1 + (m > h))
    hp = attrs[h, A_UPOS]
    tp = _marked(attrs, t, h, A_UPOS, START)
    sp = _marked(attrs, s, h, A_UPOS, START)
    mp = attrs[m, A_UPOS]
    tx = _marked(attrs, t, h, A_XPOS, START)
    sx = _marked(attrs, s, h, A_XPOS, START)
    hx = attrs[h, A_XPOS]
    mx = attrs[m, A_XPOS]
    mw = attrs[m, A_WORD]
    z = np.uint64(0)
    out[k] = fhash(401, hp, tp, sp, mp, d); k += 1
    out[k] = fhash(402, tp, sp, mp, d, z); k += 1
    out[k] = fhash(403, hp, tp, mp, d, z); k += 1
    out[k] = fhash(404, hx, tx, sx, mx, d); k += 1
    out[k] = fhash(405, tp, sp, mw, d, z); k += 1
    return k


@njit(_SIG_3, cache=True, _nrt=False)
def bigram_features(attrs, m, h1, h2, out, k):
    """Head bigram part: heads h1 of m-1 and h2 of m (Zhang & McDonald 2014)."""
    rel = np.uint64(1 + (h1 == h2) + 2 * (h1 == m) + 4 * (h2 == m - 1))
    p1 = attrs[m - 1, A_UPOS]
    p2 = attrs[m, A_UPOS]
    q1 = attrs[h1, A_UPOS]
    q2 = attrs[h2, A_UPOS]
    z = np.uint64(0)
    out[k] = fhash(501, q1, p1, q2, p2, rel); k += 1
    out[k] = fhash(502, q1, q2, rel, z, z); k += 1
    out[k] = fhash(503, p1, p2, rel, z, z); k += 1
    return k


@njit(_SIG_3, cache=True, _nrt=False)
def valency_features(attrs, h, side, count, out, k):
    """Number of h's children on one side (a valency part, as in TurboParser)."""
    sd = np.uint64(side + 1)
    c = np.uint64(count + 1)
    z = np.uint64(0)
    out[k] = fhash(701, attrs[h, A_UPOS], sd, c, z, z); k += 1
    out[k] = fhash(702, attrs[h, A_WORD], sd, c, z, z); k += 1
    out[k] = fhash(703, attrs[h, A_XPOS], sd, c, z, z); k += 1
    out[k] = fhash(704, attrs[h, A_CLASS], sd, c, z, z); k += 1
    return k


@njit(_SIG_PART, cache=True, _nrt=False)
def part_features(attrs, upos_prefix, ptype, a, b, c, d, out):
    """Write the features of one part into out[0:], return how many."""
    if ptype == PART_ARC:
        return arc_features(attrs, upos_prefix, a, b, out, 0)
    if ptype == PART_SIB_L:
        return sib_features(attrs, a, b, c, 0, out, 0)
    if ptype == PART_SIB_R:
        return sib_features(attrs, a, b, c, 1, out, 0)
    if ptype == PART_GRAND:
        return grand_features(attrs, a, b, c, out, 0)
    if ptype == PART_GSIB:
        return gsib_features(attrs, a, b, c, d, out, 0)
    if ptype == PART_TRISIB:
        return trisib_features(attrs, a, b, c, d, out, 0)
    if ptype == PART_VALENCY:
        return valency_features(attrs, a, b, c, out, 0)
    return bigram_features(attrs, a, b, c, out, 0)
