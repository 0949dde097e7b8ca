"""Selectional branching (Choi & McCallum 2013, Sections 3.2-3.4).

The one-best sequence T1 is parsed greedily; every state where the margin between
the best and second-best prediction is <= m (k = 2) is a low-confidence state, kept
with its second-best move. The b-1 low-confidence states whose alternative move
scores highest are branched: each new sequence applies the alternative, then
continues greedily. Each sequence is scored by the average probability of the moves
it made (the shared prefix included); the highest average wins. b = 1 is greedy.

With the neural analyser's arc probabilities (`arc_p`), each move's probability is
multiplied by the analyser's probability of what the move decides, to a power, and
renormalized (`with_arc_probs`): a product of experts (Hinton 2002) of the transition
classifier and the arc-factored analyser, used for the moves, the margins and the
sequence scores alike.

Python outer loop (branching, bookkeeping), one numba call per sequence
(`_run_sequence`, non-allocating, scratch passed in).
"""
from __future__ import annotations

import logging
import time
from typing import NamedTuple

import numpy as np
from numba import njit

from .classifier import compact_probabilities
from .features import N_POS, extract
from .system import (
    HEAD,
    LEFT_PASS,
    LEFT_REDUCE,
    N_ROWS,
    N_SCALARS,
    NO_REDUCE,
    NO_SHIFT,
    NS,
    RIGHT_PASS,
    RIGHT_SHIFT,
    SIGMA,
    J,
    Moves,
    N,
    apply,
    finalize,
    new_state,
    top,
    valid_mask,
)

logger = logging.getLogger(__name__)


class Scratch(NamedTuple):
    """Per-call buffers of one sentence length (Parsito's workspace), one argument of
    `_run_sequence`."""

    rows: np.ndarray
    valid: np.ndarray
    probs: np.ndarray
    pos: np.ndarray
    pool_st: np.ndarray
    pool_sc: np.ndarray
    pool_f: np.ndarray   # (cap, 3): alternative prob, running sum, running count
    pool_a: np.ndarray   # (cap,) alternative action

    @classmethod
    def make(cls, n: int, n_templates: int, n_actions: int, cap: int) -> Scratch:
        cap = max(cap, 1)
        return cls(np.zeros(n_templates, np.int64), np.zeros(n_actions, np.bool_),
                   np.zeros(n_actions, np.float64), np.zeros(N_POS, np.int64),
                   np.zeros((cap, N_ROWS, n + 1), np.int64), np.zeros((cap, N_SCALARS), np.int64),
                   np.zeros((cap, 3), np.float64), np.zeros(cap, np.int64))


ARC_P_FLOOR = 1e-4      # no move's factor is below this: the classifier keeps a say


@njit(cache=True, _nrt=False)
def with_arc_probs(st, sc, atype, arc_p, power, valid, probs):
    """Multiply each valid move's probability by the analyser's probability of what the
    move decides, to `power`; renormalize; return the best move. With i the top of
    lambda1 and j the first of beta (arc_p [n+1, n+1]: P(head | dependent), indexed
    (head, dependent)), a move decides two things:
      the pair: LEFT_* P(head(i) = j), RIGHT_* P(head(j) = i), NO-* 1 - both;
      what comes next: *-SHIFT ends j's turn, right when j has no arc with a word
        below i in lambda1 (1 - `deeper`); *-PASS goes on to those words (`deeper`,
        or for LEFT-PASS, which also keeps i, the larger of it and `later`);
        *-REDUCE drops i for good, right when i has no arc with a word after j
        (1 - `later`).
    `deeper` and `later` sum the arcs' probabilities (at most 1)."""
    i = top(st, sc)
    j = sc[J]
    if i >= 0:
        left = arc_p[j, i]
        right = arc_p[i, j]
        deeper = 0.0
        for q in range(sc[NS] - 1):
            k = st[SIGMA, q]
            deeper += arc_p[k, j] + arc_p[j, k]
        later = 0.0
        for m in range(j + 1, sc[N] + 1):
            later += arc_p[i, m]
            if st[HEAD, i] == -1:
                later += arc_p[m, i]
        deeper = min(deeper, 1.0)
        later = min(later, 1.0)
        z = 0.0
        for a in range(probs.shape[0]):
            if valid[a]:
                t = atype[a]
                if t == LEFT_REDUCE:
                    f = left * (1.0 - later)
                elif t == LEFT_PASS:
                    f = left * max(deeper, later)
                elif t == RIGHT_SHIFT:
                    f = right * (1.0 - deeper)
                elif t == RIGHT_PASS:
                    f = right * deeper
                elif t == NO_SHIFT:
                    f = (1.0 - left - right) * (1.0 - deeper)
                elif t == NO_REDUCE:
                    f = (1.0 - left - right) * (1.0 - later)
                else:                                   # NO_PASS
                    f = (1.0 - left - right) * deeper
                probs[a] *= max(f, ARC_P_FLOOR) ** power
                z += probs[a]
        if z > 0.0:
            for a in range(probs.shape[0]):
                probs[a] /= z
    best = -1
    for a in range(probs.shape[0]):
        if valid[a] and (best < 0 or probs[a] > probs[best]):
            best = a
    return best


@njit(cache=True, _nrt=False)
def _run_sequence(st, sc, attrs, table, weights, moves, margin, cap, s, acc, arcs):
    """Parse greedily from (st, sc) to a terminal state, in place.

    weights: compact (row_of, Wc, sp), see `classifier`; moves: `system.Moves`; s:
    `Scratch`; arcs: (arc_p, power), see `with_arc_probs` (power 0: not used).
    acc: float64 (3,) running (sum of move probabilities, moves) on entry and exit,
    acc[2] receives the number of low-confidence states seen. With cap > 0 the best
    `cap` low-confidence states (by the probability of their second-best move) are
    kept in s.pool_* (st, sc, [alt prob, sum, count], alt action); returns their number.
    """
    row_of, Wc, sp = weights
    atype, alabel, root_label = moves
    arc_p, power = arcs
    rows, valid, probs, pos = s.rows, s.valid, s.probs, s.pos
    pool_st, pool_sc, pool_f, pool_a = s.pool_st, s.pool_sc, s.pool_f, s.pool_a
    kept = 0
    n_rows = row_of.shape[0]
    while sc[2] <= sc[N]:
        extract(st, sc, attrs, table, n_rows, pos, rows)
        valid_mask(st, sc, atype, alabel, root_label, valid)
        best = compact_probabilities(row_of, Wc, sp, rows, valid, probs)
        if best < 0:
            break
        if power != 0.0:
            best = with_arc_probs(st, sc, atype, arc_p, power, valid, probs)
        pb = probs[best]
        if cap > 0:
            second = -1
            ps = -1.0
            for a in range(probs.shape[0]):
                if a != best and valid[a] and probs[a] > ps:
                    ps = probs[a]
                    second = a
            if second >= 0 and pb - ps <= margin:
                acc[2] += 1
                slot = -1
                if kept < cap:
                    slot = kept
                    kept += 1
                else:
                    lo = 0
                    for q in range(1, kept):
                        if pool_f[q, 0] < pool_f[lo, 0]:
                            lo = q
                    if pool_f[lo, 0] < ps:
                        slot = lo
                if slot >= 0:
                    for r in range(st.shape[0]):
                        for c in range(st.shape[1]):
                            pool_st[slot, r, c] = st[r, c]
                    for r in range(sc.shape[0]):
                        pool_sc[slot, r] = sc[r]
                    pool_f[slot, 0] = ps
                    pool_f[slot, 1] = acc[0]
                    pool_f[slot, 2] = acc[1]
                    pool_a[slot] = second
        apply(st, sc, atype[best], alabel[best])
        acc[0] += pb
        acc[1] += 1
    return kept


_NO_ARCS = np.zeros((1, 1), np.float64)


def parse(attrs: np.ndarray, table: np.ndarray, weights: tuple, atype: np.ndarray,
          alabel: np.ndarray, root_label: int, fallback_label: int, beam: int,
          margin: float, scratch: Scratch | None = None, deadline: float | None = None,
          arc_p: np.ndarray | None = None, power: float = 0.0):
    """Parse one encoded sentence; returns (heads int64 (n+1,), label ids int64 (n+1,),
    score = average move probability of the winning sequence, stats dict).

    weights: compact (row_of, Wc, sp), see `classifier`. deadline (time.monotonic()):
    the one-best sequence is always parsed; no branch is started after it. arc_p
    float64 [n+1, n+1] (head, dependent): the analyser's P(head | dependent), weighed
    into every move to `power` (`with_arc_probs`; 0 or no arc_p: the classifier alone)."""
    n = attrs.shape[0] - 1
    if arc_p is None or not power:
        arc_p, power = _NO_ARCS, 0.0
    elif arc_p.shape != (n + 1, n + 1):
        raise ValueError(f"arc_p has shape {arc_p.shape}, expected {(n + 1, n + 1)}")
    cap = beam - 1
    weights = tuple(weights)
    s = scratch or Scratch.make(n, table.shape[0], weights[1].shape[1], cap)
    st, sc = new_state(n)
    acc = np.zeros(3, np.float64)
    moves = Moves(atype, alabel, root_label)
    arcs = (arc_p, float(power))
    kept = _run_sequence(st, sc, attrs, table, weights, moves, margin, cap, s, acc, arcs)
    transitions = int(acc[1])
    low_conf = int(acc[2])
    best_st, best_avg = st, acc[0] / max(acc[1], 1.0)
    best_seq = 0
    hit = False
    if kept:
        order = np.argsort(-s.pool_f[:kept, 0], kind="stable")
        # copy the pool out: later sequences reuse nothing, but keep it explicit
        pool = [(s.pool_st[q].copy(), s.pool_sc[q].copy(), s.pool_f[q].copy(), int(s.pool_a[q]))
                for q in order]
        for b, (pst, psc, pf, alt) in enumerate(pool, 1):
            if deadline is not None and time.monotonic() > deadline:
                hit = True
                break
            apply(pst, psc, atype[alt], alabel[alt])
            acc[0] = pf[1] + pf[0]
            acc[1] = pf[2] + 1
            before = acc[1]
            _run_sequence(pst, psc, attrs, table, weights, moves, margin, 0, s, acc, arcs)
            transitions += int(acc[1] - before) + 1
            avg = acc[0] / acc[1]
            if avg > best_avg:
                best_st, best_avg, best_seq = pst, avg, b
    fixed = finalize(best_st, root_label, fallback_label)
    stats = {"transitions": transitions, "branches": kept, "low_confidence": low_conf,
             "best_sequence": best_seq, "attached_at_end": int(fixed), "deadline_hit": hit}
    return best_st[0].copy(), best_st[1].copy(), float(best_avg), stats
