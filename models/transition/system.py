"""The hybrid arc-eager / list-based transition system of Choi & McCallum (ACL 2013,
Section 2, Tables 1-2), after Choi & Palmer (2011).

A parser state is (lambda1, lambda2, beta, A): lambda1 a stack whose top is i,
lambda2 a deque of words passed over for the current j, beta the input buffer whose
first word is j, and A the labeled arcs built so far. beta is always the suffix
j..n, so it is one integer. Seven transition types, each with a label for the arc
types (the "label" of NO-* transitions is -1):

    LEFT_l-REDUCE   ([l1|i], l2, [j|b], A) => (l1, l2, [j|b], A + {i <-l- j})
    RIGHT_l-SHIFT   ([l1|i], l2, [j|b], A) => ([l1|i|l2|j], [], b, A + {i -l-> j})
    NO-SHIFT        ([l1|i], l2, [j|b], A) => ([l1|i|l2|j], [], b, A)
    NO-REDUCE       ([l1|i], l2, [j|b], A) => (l1, l2, [j|b], A)
    LEFT_l-PASS     ([l1|i], l2, [j|b], A) => (l1, [i|l2], [j|b], A + {i <-l- j})
    RIGHT_l-PASS    ([l1|i], l2, [j|b], A) => (l1, [i|l2], [j|b], A + {i -l-> j})
    NO-PASS         ([l1|i], l2, [j|b], A) => (l1, [i|l2], [j|b], A)

Validity (Table 2, the structural part; the gold-tree part lives in `oracle.py`):
  LEFT_*:   i != 0, i has no head, i is not an ancestor of j (no cycle).
  RIGHT_*:  j has no head, j is not an ancestor of i; i == 0 only for the first
            root dependent, and then (only then) with the root label.
  NO-REDUCE: i has a head (the root is never reduced).
  NO-SHIFT, NO-PASS: always (when lambda1 is empty only the *-SHIFT moves apply,
            and of those only NO-SHIFT, as there is no i).
A state is terminal when beta is empty; `finalize` then attaches every headless
word (one root dependent, the others under it), so the result is a UD tree.

Kernel layout (every function here is numba, small, pure over arrays):
  st: int64 (N_ROWS, n+1) per-word rows (HEAD, LABEL, SIGMA, DELTA, LM1, LM2, RM1,
      RM2, NL, NR, LSET, RSET); SIGMA/DELTA hold the stack and the deque (top at the
      end, so DELTA[nd-1] is the front of lambda2, the leftmost passed word).
  sc: int64 (N_SCALARS,) NS, ND, J, N.
  moves: `Moves`, a model's actions (type and label of each) and its root label.
Labels are small ints; LSET/RSET are bitsets of dependents' labels (id mod 63).
"""
from __future__ import annotations

import logging
from typing import NamedTuple

import numpy as np
from numba import njit

# transition types
LEFT_REDUCE, RIGHT_SHIFT, NO_SHIFT, NO_REDUCE, LEFT_PASS, RIGHT_PASS, NO_PASS = range(7)
N_TYPES = 7
TYPE_NAMES = ("LEFT-REDUCE", "RIGHT-SHIFT", "NO-SHIFT", "NO-REDUCE", "LEFT-PASS",
              "RIGHT-PASS", "NO-PASS")
LABELED = (True, True, False, False, True, True, False)

# rows of st
HEAD, LABEL, SIGMA, DELTA, LM1, LM2, RM1, RM2, NL, NR, LSET, RSET = range(12)
N_ROWS = 12
# scalars of sc
NS, ND, J, N = range(4)
N_SCALARS = 4

logger = logging.getLogger(__name__)


@njit(cache=True)
def new_state(n):
    """Initial state of a sentence of n words: lambda1 = [0], lambda2 = [], beta = 1..n."""
    st = np.full((N_ROWS, n + 1), -1, dtype=np.int64)
    st[NL, :] = 0
    st[NR, :] = 0
    st[LSET, :] = 0
    st[RSET, :] = 0
    sc = np.zeros(N_SCALARS, dtype=np.int64)
    st[SIGMA, 0] = 0
    sc[NS] = 1
    sc[ND] = 0
    sc[J] = 1
    sc[N] = n
    return st, sc


@njit(cache=True, _nrt=False)
def is_terminal(sc):
    return sc[J] > sc[N]


@njit(cache=True, _nrt=False)
def top(st, sc):
    """i, the top of lambda1, or -1 when lambda1 is empty."""
    return st[SIGMA, sc[NS] - 1] if sc[NS] > 0 else -1


@njit(cache=True, _nrt=False)
def is_ancestor(st, a, d):
    """True when a is d or an ancestor of d under the arcs built so far."""
    k = d
    while k != -1:
        if k == a:
            return True
        k = st[HEAD, k]
    return False


# explicit signatures: called with literal transition types (0..6) and label ids,
# which would otherwise compile one specialisation each
@njit("boolean(int64[:, ::1], int64[::1], int64)", cache=True, _nrt=False)
def type_valid(st, sc, t):
    """Validity of transition type t (any label) in state (st, sc)."""
    if sc[J] > sc[N]:
        return False
    i = top(st, sc)
    j = sc[J]
    if i < 0:
        return t == NO_SHIFT
    if t == LEFT_REDUCE or t == LEFT_PASS:
        return i != 0 and st[HEAD, i] == -1 and not is_ancestor(st, i, j)
    if t == RIGHT_SHIFT or t == RIGHT_PASS:
        if st[HEAD, j] != -1 or is_ancestor(st, j, i):
            return False
        return i != 0 or st[NR, 0] == 0
    if t == NO_REDUCE:
        return st[HEAD, i] != -1
    return True  # NO_SHIFT, NO_PASS


@njit(cache=True, _nrt=False)
def label_valid(st, sc, t, label, root_label):
    """The root label goes on the arc from word 0 and only there."""
    if t == RIGHT_SHIFT or t == RIGHT_PASS:
        return (top(st, sc) == 0) == (label == root_label)
    if t == LEFT_REDUCE or t == LEFT_PASS:
        return label != root_label
    return True


@njit(cache=True, _nrt=False)
def valid_mask(st, sc, atype, alabel, root_label, out):
    """out[a] = action a = (atype[a], alabel[a]) is valid; returns the number valid."""
    count = 0
    ok0 = type_valid(st, sc, 0)
    ok1 = type_valid(st, sc, 1)
    ok2 = type_valid(st, sc, 2)
    ok3 = type_valid(st, sc, 3)
    ok4 = type_valid(st, sc, 4)
    ok5 = type_valid(st, sc, 5)
    ok6 = type_valid(st, sc, 6)
    for a in range(atype.shape[0]):
        t = atype[a]
        ok = ((t == 0 and ok0) or (t == 1 and ok1) or (t == 2 and ok2) or (t == 3 and ok3)
              or (t == 4 and ok4) or (t == 5 and ok5) or (t == 6 and ok6))
        if ok and alabel[a] >= 0:
            ok = label_valid(st, sc, t, alabel[a], root_label)
        out[a] = ok
        if ok:
            count += 1
    return count


@njit("void(int64[:, ::1], int64, int64, int64)", cache=True, _nrt=False)
def _add_arc(st, h, d, label):
    """Action: add h -label-> d and update the head's dependent summaries."""
    st[HEAD, d] = h
    st[LABEL, d] = label
    bit = np.int64(1) << (label % 63)
    if d < h:
        st[NL, h] += 1
        st[LSET, h] |= bit
        if st[LM1, h] == -1 or d < st[LM1, h]:
            st[LM2, h] = st[LM1, h]
            st[LM1, h] = d
        elif st[LM2, h] == -1 or d < st[LM2, h]:
            st[LM2, h] = d
    else:
        st[NR, h] += 1
        st[RSET, h] |= bit
        if st[RM1, h] == -1 or d > st[RM1, h]:
            st[RM2, h] = st[RM1, h]
            st[RM1, h] = d
        elif st[RM2, h] == -1 or d > st[RM2, h]:
            st[RM2, h] = d


@njit(cache=True, _nrt=False)
def _shift(st, sc):
    """lambda1 := lambda1 | lambda2 | j; lambda2 := []; beta := beta[1:]."""
    ns = sc[NS]
    for k in range(sc[ND] - 1, -1, -1):   # front of lambda2 (leftmost) first
        st[SIGMA, ns] = st[DELTA, k]
        ns += 1
    st[SIGMA, ns] = sc[J]
    sc[NS] = ns + 1
    sc[ND] = 0
    sc[J] += 1


@njit(cache=True, _nrt=False)
def _pass(st, sc):
    """lambda2 := [i | lambda2]."""
    i = st[SIGMA, sc[NS] - 1]
    sc[NS] -= 1
    st[DELTA, sc[ND]] = i
    sc[ND] += 1


@njit(cache=True, _nrt=False)
def apply(st, sc, t, label):
    """Perform transition type t with label (ignored for NO-*); the caller checked
    validity. Returns the word that received a head, or -1 (Parsito's `perform`)."""
    j = sc[J]
    if sc[NS] == 0:          # only NO-SHIFT is valid on an empty lambda1
        _shift(st, sc)
        return -1
    i = st[SIGMA, sc[NS] - 1]
    if t == LEFT_REDUCE:
        _add_arc(st, j, i, label)
        sc[NS] -= 1
        return i
    if t == RIGHT_SHIFT:
        _add_arc(st, i, j, label)
        _shift(st, sc)
        return j
    if t == NO_SHIFT:
        _shift(st, sc)
        return -1
    if t == NO_REDUCE:
        sc[NS] -= 1
        return -1
    if t == LEFT_PASS:
        _add_arc(st, j, i, label)
        _pass(st, sc)
        return i
    if t == RIGHT_PASS:
        _add_arc(st, i, j, label)
        _pass(st, sc)
        return j
    _pass(st, sc)  # NO_PASS
    return -1


@njit(cache=True, _nrt=False)
def finalize(st, root_label, fallback_label):
    """Attach headless words so that the arcs form a UD tree with one root dependent:
    if word 0 has no dependent, the leftmost headless word becomes it; every other
    headless word goes under the root dependent with `fallback_label`.
    Returns the number of words attached here."""
    n = st.shape[1] - 1
    r = st[RM1, 0]
    fixed = 0
    for d in range(1, n + 1):
        if st[HEAD, d] == -1:
            if r == -1:
                _add_arc(st, 0, d, root_label)
                r = d
            else:
                _add_arc(st, r, d, fallback_label)
            fixed += 1
    return fixed


def action_table(labels: list[str], seen: set[tuple[int, str]] | None = None):
    """Actions as (type, label id) arrays: NO-* first, then each arc type with each
    label (restricted to `seen` (type, label) pairs when given)."""
    atype, alabel = [], []
    for t in (NO_SHIFT, NO_REDUCE, NO_PASS):
        atype.append(t)
        alabel.append(-1)
    for t in (LEFT_REDUCE, RIGHT_SHIFT, LEFT_PASS, RIGHT_PASS):
        for li, lab in enumerate(labels):
            if seen is None or (t, lab) in seen:
                atype.append(t)
                alabel.append(li)
    return np.array(atype, dtype=np.int64), np.array(alabel, dtype=np.int64)


class Moves(NamedTuple):
    """A model's actions as the kernels read them: action a is (atype[a], alabel[a]),
    int64 (A,) each, the label -1 for NO-* moves; root_label is the root arc's label."""
    atype: np.ndarray
    alabel: np.ndarray
    root_label: int


def action_index(atype: np.ndarray, alabel: np.ndarray, n_labels: int) -> np.ndarray:
    """int64 [move types, n_labels + 1]: the id of action (type, label) at
    [type, label + 1] (an unlabelled move's label is -1); -1 where there is none. The
    oracle answers with (type, label), the classifier with action ids."""
    index = np.full((N_TYPES, n_labels + 1), -1, dtype=np.int64)
    index[atype, alabel + 1] = np.arange(len(atype))
    return index


def action_name(t: int, label: str | None) -> str:
    name = TYPE_NAMES[t]
    if LABELED[t]:
        a, b = name.split("-")
        return f"{a}_{label}-{b}"
    return name
