"""Wilson's walk: weighted random trees, and no endless walk when weights trap it."""
from __future__ import annotations

import numpy as np

from models.graph.rng import new_state
from models.graph.search_space import build_search_space
from models.graph.wilson import sample_tree
from models.tree import is_valid_tree


def _sample(cand, ncand, cdf, root_cdf, seed=0):
    n1 = len(ncand)
    heads = np.empty(n1, dtype=np.int64)
    sample_tree(cand, ncand, cdf, root_cdf, new_state(seed), heads,
                np.empty(n1, dtype=np.bool_), np.empty(n1, dtype=np.int64))
    return heads


def test_a_walk_trapped_in_a_cycle_still_ends_in_a_tree():
    """Words 1 and 2 point at each other with all of their weight (in float64 the
    way out has probability 0) and word 3 is the root's child: the walk from 1 or 2
    would bounce between them forever; past its step cap it draws uniformly."""
    cand = np.array([[0, 0], [2, 3], [1, 3], [1, 2]], dtype=np.int32)
    ncand = np.array([0, 2, 2, 2], dtype=np.int32)
    cdf = np.array([[0.0, 0.0], [1.0, 1.0 + 1e-300], [1.0, 1.0 + 1e-300], [1.0, 2.0]])
    root_cdf = np.array([0.0, 0.0, 0.0, 1.0])                 # only word 3 under the root
    for seed in range(5):
        heads = _sample(cand, ncand, cdf, root_cdf, seed)
        assert heads[3] == 0 and is_valid_tree(heads), heads


def test_weighted_walk_follows_moderate_weights():
    """With ordinary weights the cap never binds: trees follow the weights."""
    n1 = 5
    allowed = np.ones((n1, n1), dtype=bool)
    np.fill_diagonal(allowed, False)
    allowed[:, 0] = False
    S = np.zeros((n1, n1))
    S[1, 2] = S[2, 3] = S[3, 4] = 3.0                # a chain 1 -> 2 -> 3 -> 4 is e^9 likelier
    S[0, 1] = 3.0
    space = build_search_space(allowed, S, "first_order")
    chain = 0
    for seed in range(200):
        heads = _sample(space.cand, space.ncand, space.cdf, space.root_cdf, seed)
        assert is_valid_tree(heads)
        chain += list(heads[1:]) == [0, 1, 2, 3]
    assert chain > 100
