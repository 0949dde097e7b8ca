"""Pure helper functions on `heads` arrays (spaCy `nonproj.pyx`, SuPar `structs/fn.py`).

A `heads` array has one entry per node: index 0 is the artificial root (value -1,
ignored), `heads[i]` is the head of word i (1..n), 0 means "attached to the root"
and -1 means "no head". Every function accepts any integer sequence (list or numpy
array) and never modifies it; none raises on a malformed array: it reports instead.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

logger = logging.getLogger(__name__)

Heads = Sequence[int] | np.ndarray


def _as_list(heads: Heads) -> list[int]:
    return [int(h) for h in heads]


def root_children(heads: Heads) -> list[int]:
    """Words attached to the root (HEAD 0), in order (spaCy `Doc.sents` roots)."""
    return [i for i, h in enumerate(_as_list(heads)) if i > 0 and h == 0]


def ancestors(heads: Heads, i: int) -> list[int]:
    """Heads of word i, nearest first, ending with 0 if reached (spaCy `nonproj.ancestors`).

    Stops early, without error, at a missing or out-of-range head or when a cycle
    brings the walk back to a node already seen; i itself is never listed.
    """
    hs = _as_list(heads)
    n = len(hs) - 1
    out: list[int] = []
    seen = {i}
    node = i
    while 1 <= node <= n:
        node = hs[node]
        if node < 0 or node > n or node in seen:
            break
        out.append(node)
        seen.add(node)
    return out


def find_cycle(heads: Heads) -> list[int] | None:
    """Words on the first cycle, following heads from its smallest word (spaCy `contains_cycle`).

    Returns e.g. [3, 5] for heads[3] == 5, heads[5] == 3, or [4] for a self-loop;
    None if following heads from every word ends at 0 or at a missing/out-of-range head.
    Cycles are searched from word 1 upwards; the walk is linear in n.
    """
    hs = _as_list(heads)
    n = len(hs) - 1
    state = [0] * (n + 1)  # 0 = unvisited, start word of the walk that visited it
    for start in range(1, n + 1):
        if state[start]:
            continue
        node = start
        while 1 <= node <= n and not state[node]:
            state[node] = start
            node = hs[node]
        if 1 <= node <= n and state[node] == start:
            cycle = [node]
            nxt = hs[node]
            while nxt != node:
                cycle.append(nxt)
                nxt = hs[nxt]
            k = cycle.index(min(cycle))
            return cycle[k:] + cycle[:k]
    return None


def is_valid_tree(heads: Heads) -> bool:
    """Every word has one head in 0..n, no cycle, exactly one word on 0 (UD validate.py)."""
    hs = _as_list(heads)
    n = len(hs) - 1
    if n < 1 or any(h < 0 or h > n for h in hs[1:]):
        return False
    return len(root_children(hs)) == 1 and find_cycle(hs) is None


def is_projective(heads: Heads) -> bool:
    """No two arcs cross, the root's arcs included (SuPar `fn.isprojective`).

    Arcs (h, d) and (h', d') cross when exactly one end of one lies strictly inside
    the span of the other. Words without a head (-1) have no arc. Meaningful for
    valid trees; a cyclic array still gets an answer about its arcs.
    """
    hs = np.asarray(_as_list(heads), dtype=np.int64)
    deps = np.nonzero(hs[1:] >= 0)[0] + 1
    if len(deps) < 2:
        return True
    lo = np.minimum(hs[deps], deps)
    hi = np.maximum(hs[deps], deps)
    # crossing: lo1 < lo2 < hi1 < hi2 for some ordered pair of arcs
    cross = (lo[:, None] < lo[None, :]) & (lo[None, :] < hi[:, None]) & (hi[:, None] < hi[None, :])
    return not bool(cross.any())
