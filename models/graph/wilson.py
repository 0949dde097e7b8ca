"""Random initial trees: Wilson's (1996) loop-erased random walk.

Samples a spanning arborescence of the pruned graph with probability
proportional to the product of its arc weights (uniform weights give uniform
trees), as the greedy decoder's initialisation (Zhang et al. 2014, Section
3.2). The UD single-root constraint: the root's child is drawn first, then
the walk grows the tree with root arcs excluded.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .rng import uniform

MAX_STEPS_PER_WORD = 1000   # of one word's walk, x sentence length (see sample_tree)


@njit(cache=True, inline="always")
def _draw(cdf_row, count, state):
    u = uniform(state) * cdf_row[count - 1]
    k = 0
    while k < count - 1 and cdf_row[k] <= u:
        k += 1
    return k


@njit(cache=True)
def sample_tree(cand, ncand, cdf, root_cdf, state, heads, in_tree, order):
    """Fill heads (int64 (n+1)) with a random tree.

    cand: int32 (n+1, K) candidate heads of each word, root excluded;
    ncand: int32 (n+1); cdf: float64 (n+1, K) cumulative weights of cand;
    root_cdf: float64 (n+1) cumulative weights of root arcs over words (index 0 = 0).
    in_tree (bool (n+1)) and order (int64 (n+1)) are scratch.
    """
    n1 = heads.shape[0]
    n = n1 - 1
    u = uniform(state) * root_cdf[n]
    r = 1
    while r < n and root_cdf[r] <= u:
        r += 1
    for i in range(n1):
        in_tree[i] = False
        order[i] = i
    in_tree[0] = True
    in_tree[r] = True
    heads[0] = -1
    heads[r] = 0
    # random visiting order (Fisher-Yates) so no word position is favoured
    for i in range(n, 1, -1):
        j = 1 + np.int64(uniform(state) * i)
        t = order[i]
        order[i] = order[j]
        order[j] = t
    # Arc weights so peaked that the walk is trapped in a cycle (a -> b -> a with
    # probability ~1) would make it run for ~1/p steps; past MAX_STEPS_PER_WORD x n
    # steps for one word it draws heads uniformly, which reaches the tree quickly.
    max_steps = MAX_STEPS_PER_WORD * n1
    for idx in range(1, n1):
        i = order[idx]
        v = i
        steps = 0
        while not in_tree[v]:
            if steps < max_steps:
                k = _draw(cdf[v], ncand[v], state)
            else:
                k = min(np.int64(uniform(state) * ncand[v]), ncand[v] - 1)
            heads[v] = cand[v, k]
            v = heads[v]
            steps += 1
        v = i
        while not in_tree[v]:
            in_tree[v] = True
            v = heads[v]
    return r
