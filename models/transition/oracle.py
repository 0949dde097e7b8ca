"""Static oracle of the hybrid system (Choi & Palmer 2011; Choi & McCallum 2013, Table 2).

Built for one gold tree (gold heads `gh`, gold label ids `gl`, both int64 of length
n+1 with gh[0] = -1), it answers "the move to follow" in any state reached by
following it (Parsito's `tree_oracle`), so bootstrapping can swap it for another
source of moves without touching the system. With i the top of lambda1, j the first
word of beta:

  i <- j in gold:  LEFT_l-REDUCE if i has no gold dependent in beta after j, else LEFT_l-PASS
  i -> j in gold:  RIGHT_l-SHIFT if no other word of lambda1 has a gold arc with j,
                   else RIGHT_l-PASS
  otherwise:       NO-REDUCE if i has its head and no gold dependent in beta;
                   NO-SHIFT if no word of lambda1 has a gold arc with j; else NO-PASS

Every tree, projective or not, is rebuilt exactly (tested on both treebanks).
"""
from __future__ import annotations

import logging

import numpy as np
from numba import njit

from .system import (
    HEAD,
    LEFT_PASS,
    LEFT_REDUCE,
    NO_PASS,
    NO_REDUCE,
    NO_SHIFT,
    NS,
    RIGHT_PASS,
    RIGHT_SHIFT,
    SIGMA,
    J,
    N,
    apply,
    new_state,
)

logger = logging.getLogger(__name__)


@njit(cache=True, _nrt=False)
def _has_dep_after(gh, i, start, n):
    """Has i a gold dependent among words start..n?"""
    for k in range(start, n + 1):
        if gh[k] == i:
            return True
    return False


@njit(cache=True, _nrt=False)
def oracle_move(st, sc, gh, gl):
    """(type, label id) of the oracle move; label -1 for NO-* moves."""
    j = sc[J]
    n = sc[N]
    if sc[NS] == 0:
        return NO_SHIFT, -1
    i = st[SIGMA, sc[NS] - 1]
    if gh[i] == j:
        if _has_dep_after(gh, i, j + 1, n):
            return LEFT_PASS, gl[i]
        return LEFT_REDUCE, gl[i]
    if gh[j] == i:
        for q in range(sc[NS] - 1):
            k = st[SIGMA, q]
            if gh[k] == j:
                return RIGHT_PASS, gl[j]
        return RIGHT_SHIFT, gl[j]
    if st[HEAD, i] != -1 and not _has_dep_after(gh, i, j, n):
        return NO_REDUCE, -1
    for q in range(sc[NS]):
        k = st[SIGMA, q]
        if gh[k] == j or gh[j] == k:
            return NO_PASS, -1
    return NO_SHIFT, -1


@njit(cache=True)
def oracle_sequence(gh, gl):
    """Follow the oracle from the initial state; returns (types, labels, heads, labels
    built) as int64 arrays. Used by training and by the exactness test."""
    n = gh.shape[0] - 1
    st, sc = new_state(n)
    cap = 4 * n * n + 8
    types = np.empty(cap, dtype=np.int64)
    labels = np.empty(cap, dtype=np.int64)
    m = 0
    while sc[J] <= n and m < cap:
        t, lab = oracle_move(st, sc, gh, gl)
        types[m] = t
        labels[m] = lab
        m += 1
        apply(st, sc, t, lab)
    return types[:m], labels[:m], st[0].copy(), st[1].copy()


def rebuilds(gh: np.ndarray, gl: np.ndarray) -> bool:
    """Does following the oracle rebuild the gold tree (heads and labels) exactly?"""
    _, _, heads, labels = oracle_sequence(np.asarray(gh, np.int64), np.asarray(gl, np.int64))
    return bool(np.array_equal(heads[1:], gh[1:]) and np.array_equal(labels[1:], gl[1:]))
