"""Rich non-local features (Zhang & Nivre 2011, Table 1) for the hybrid system, hashed.

Templates are data (Parsito's `node_extractor`): each is a line of up to three
`position.attribute` items, e.g. "s0.w b0.p". They are parsed once into an int
table and stored in the model file. Positions name words of the state: s0 s1 s2 (top
of lambda1 and below), d0 (front of lambda2), b0 b1 b2 (beta), s0h s0hh (head and
grandparent of s0), s0l s0l2 s0r s0r2 (leftmost, second leftmost, rightmost, second
rightmost dependents of s0), b0l b0l2 (of b0; b0 has only left dependents).
Attributes: w form (lower-cased), m lemma, p UPOS, x XPOS, f 3-letter suffix, l the
word's arc label, vl vr left/right valency, sl sr left/right label sets, hh has-head,
and three state-level ones that ignore the position: dist (b0 - s0, capped), ns and
nd (sizes of lambda1 and lambda2, capped). A missing word hashes to a per-attribute
null value, so "no s1" is a feature too.

`extract` (numba, non-allocating) writes one row index per template into `out`:
row = mix(template id, values...) mod n_rows.
"""
from __future__ import annotations

import logging

import numpy as np
from numba import njit

from .system import DELTA, HEAD, LABEL, LM1, LM2, LSET, ND, NL, NR, NS, RM1, RM2, RSET, SIGMA, J, N

POSITIONS = ("s0", "s1", "s2", "d0", "b0", "b1", "b2", "s0h", "s0hh", "s0l", "s0l2", "s0r",
             "s0r2", "b0l", "b0l2")
ATTRIBUTES = ("w", "m", "p", "x", "f", "l", "vl", "vr", "sl", "sr", "hh", "dist", "ns", "nd")
N_POS = len(POSITIONS)
MAX_ITEMS = 3

DEFAULT_TEMPLATES = (
    # single words
    "s0.w s0.p", "s0.w", "s0.p", "s0.m", "s0.x", "s0.f",
    "b0.w b0.p", "b0.w", "b0.p", "b0.m", "b0.x", "b0.f",
    "b1.w b1.p", "b1.w", "b1.p", "b1.m",
    "b2.w b2.p", "b2.w", "b2.p",
    "s1.w", "s1.p", "s1.w s1.p", "s2.p",
    "d0.w", "d0.p", "d0.w d0.p",
    # word pairs
    "s0.w s0.p b0.w", "s0.w b0.w b0.p", "s0.w b0.w", "s0.p b0.p", "b0.p b1.p",
    "s0.w b0.p", "s0.p b0.w", "s0.x b0.x", "s0.m b0.m", "s1.p s0.p", "s1.w s0.w",
    "d0.p b0.p", "d0.p s0.p", "s0.w s0.p b0.p", "s0.p b0.w b0.p",
    # three words
    "b0.p b1.p b2.p", "s0.p b0.p b1.p", "s0h.p s0.p b0.p", "s0.p s0l.p b0.p",
    "s0.p s0r.p b0.p", "s0.p b0.p b0l.p", "s1.p s0.p b0.p", "d0.p s0.p b0.p",
    # distance
    "s0.w dist", "s0.p dist", "b0.w dist", "b0.p dist", "s0.w b0.w dist", "s0.p b0.p dist",
    # valency
    "s0.w s0.vr", "s0.p s0.vr", "s0.w s0.vl", "s0.p s0.vl", "b0.w b0.vl", "b0.p b0.vl",
    # unigrams of heads and dependents
    "s0h.w", "s0h.p", "s0.l", "s0l.w", "s0l.p", "s0l.l", "s0r.w", "s0r.p", "s0r.l",
    "b0l.w", "b0l.p", "b0l.l",
    # third order
    "s0hh.w", "s0hh.p", "s0h.l", "s0l2.w", "s0l2.p", "s0l2.l", "s0r2.w", "s0r2.p", "s0r2.l",
    "b0l2.w", "b0l2.p", "b0l2.l", "s0.p s0l.p s0l2.p", "s0.p s0r.p s0r2.p",
    "s0.p s0h.p s0hh.p", "b0.p b0l.p b0l2.p",
    # label sets
    "s0.w s0.sr", "s0.p s0.sr", "s0.w s0.sl", "s0.p s0.sl", "b0.w b0.sl", "b0.p b0.sl",
    # list-based state
    "s0.hh", "s0.hh b0.p", "s0.hh s0.p b0.p", "b0.hh b0.p", "ns nd", "s0.p nd", "s0.p ns",
)

logger = logging.getLogger(__name__)


def parse_templates(templates) -> np.ndarray:
    """int64 (T, MAX_ITEMS, 2) of (position, attribute) pairs, -1 padded."""
    out = np.full((len(templates), MAX_ITEMS, 2), -1, dtype=np.int64)
    for t, line in enumerate(templates):
        items = line.split()
        if not 1 <= len(items) <= MAX_ITEMS:
            raise ValueError(f"template {line!r}: 1..{MAX_ITEMS} items")
        for k, item in enumerate(items):
            if item in ("dist", "ns", "nd"):
                out[t, k] = (0, ATTRIBUTES.index(item))
                continue
            pos, _, attr = item.partition(".")
            if pos not in POSITIONS or attr not in ATTRIBUTES:
                raise ValueError(f"template {line!r}: unknown item {item!r}")
            out[t, k] = (POSITIONS.index(pos), ATTRIBUTES.index(attr))
    return out


@njit(cache=True, _nrt=False)
def _mix(h, v):
    """64-bit hash combine (splitmix64 finaliser of h ^ v)."""
    x = (h ^ np.uint64(v)) + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, _nrt=False)
def _positions(st, sc, pos):
    """pos[k] = word at position k (POSITIONS order) or -1."""
    ns = sc[NS]
    s0 = st[SIGMA, ns - 1] if ns > 0 else -1
    pos[0] = s0
    pos[1] = st[SIGMA, ns - 2] if ns > 1 else -1
    pos[2] = st[SIGMA, ns - 3] if ns > 2 else -1
    pos[3] = st[DELTA, sc[ND] - 1] if sc[ND] > 0 else -1
    j = sc[J]
    n = sc[N]
    pos[4] = j if j <= n else -1
    pos[5] = j + 1 if j + 1 <= n else -1
    pos[6] = j + 2 if j + 2 <= n else -1
    h = st[HEAD, s0] if s0 >= 0 else -1
    pos[7] = h
    pos[8] = st[HEAD, h] if h >= 0 else -1
    pos[9] = st[LM1, s0] if s0 >= 0 else -1
    pos[10] = st[LM2, s0] if s0 >= 0 else -1
    pos[11] = st[RM1, s0] if s0 >= 0 else -1
    pos[12] = st[RM2, s0] if s0 >= 0 else -1
    b0 = pos[4]
    pos[13] = st[LM1, b0] if b0 >= 0 else -1
    pos[14] = st[LM2, b0] if b0 >= 0 else -1


@njit(cache=True, _nrt=False)
def _value(st, sc, attrs, pos, p, a):
    """Value (uint64) of attribute a of the word at position p."""
    if a == 11:   # dist
        if pos[0] < 0 or pos[4] < 0:
            return np.uint64(1000)
        d = pos[4] - pos[0]
        return np.uint64(d if d < 10 else (10 if d < 15 else 15))
    if a == 12:
        return np.uint64(min(sc[NS], 6))
    if a == 13:
        return np.uint64(min(sc[ND], 6))
    w = pos[p]
    if w < 0:
        return np.uint64(0x5EED0000 + a)   # null value of this attribute
    if a <= 4:
        return attrs[w, a]
    if a == 5:
        return np.uint64(st[LABEL, w] + 7)
    if a == 6:
        return np.uint64(min(st[NL, w], 8))
    if a == 7:
        return np.uint64(min(st[NR, w], 8))
    if a == 8:
        return np.uint64(st[LSET, w])
    if a == 9:
        return np.uint64(st[RSET, w])
    return np.uint64(1 if st[HEAD, w] >= 0 else 2)   # hh


@njit(cache=True, _nrt=False)
def extract(st, sc, attrs, table, n_rows, pos, out):
    """Row indices of the features of state (st, sc).

    attrs: uint64 (n+1, 5) hashed token attributes (models.graph.encode);
    table: int64 (T, 3, 2) parsed templates; pos: int64 scratch (N_POS,);
    out: int64 (T,) receives rows in [0, n_rows) (n_rows a power of two).
    """
    _positions(st, sc, pos)
    mask = np.uint64(n_rows - 1)
    for t in range(table.shape[0]):
        h = _mix(np.uint64(0x51ED27), np.uint64(t))
        for k in range(table.shape[1]):
            p = table[t, k, 0]
            if p < 0:
                break
            h = _mix(h, _value(st, sc, attrs, pos, p, table[t, k, 1]))
        out[t] = np.int64(h & mask)
