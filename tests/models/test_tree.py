"""Tree helpers on literal heads arrays, and against brute-force definitions for n <= 5."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from models.tree import ancestors, find_cycle, is_projective, is_valid_tree, root_children

# 1 <- 2 -> 3 ; 2 is the root word; 3 -> 5 -> 4
TREE = [-1, 2, 0, 2, 5, 3]
# "A hearing is scheduled on the issue today ." with the classic non-projective arc
NONPROJ = [-1, 2, 4, 4, 0, 2, 7, 5, 4, 4]


@pytest.mark.parametrize("heads", [TREE, np.array(TREE, dtype=np.int64)])
def test_valid_tree_list_or_array(heads):
    assert is_valid_tree(heads)
    assert find_cycle(heads) is None
    assert root_children(heads) == [2]
    assert is_projective(heads)


def test_ancestors_nearest_first_ending_at_root():
    assert ancestors(TREE, 4) == [5, 3, 2, 0]
    assert ancestors(TREE, 2) == [0]
    assert ancestors(TREE, 0) == []


def test_ancestors_stops_at_cycle_and_missing_head():
    assert ancestors([-1, 2, 3, 1], 1) == [2, 3]
    assert ancestors([-1, 2, -1], 1) == [2]
    assert ancestors([-1, 9], 1) == []


def test_find_cycle_starts_at_smallest_word():
    assert find_cycle([-1, 0, 4, 2, 3]) == [2, 4, 3]
    assert find_cycle([-1, 0, 3, 2]) == [2, 3]


def test_find_cycle_self_loop():
    assert find_cycle([-1, 0, 2]) == [2]


def test_find_cycle_reports_first_cycle_reached_from_low_words():
    # word 1 hangs off the cycle 3 <-> 4; a second cycle 5 <-> 6
    assert find_cycle([-1, 3, 0, 4, 3, 6, 5]) == [3, 4]


def test_find_cycle_ignores_missing_and_out_of_range_heads():
    assert find_cycle([-1, -1, 1, 7]) is None


@pytest.mark.parametrize(
    "heads",
    [
        [-1],  # no words
        [-1, 0, 0],  # two roots
        [-1, 2, 1],  # no root (and a cycle)
        [-1, 0, 3, 2],  # cycle beside the root
        [-1, 0, -1],  # word without head
        [-1, 0, 3],  # head out of range
        [-1, 0, 2],  # self-loop
    ],
)
def test_invalid_trees(heads):
    assert not is_valid_tree(heads)


def test_root_children_in_order():
    assert root_children([-1, 0, 1, 0, 0]) == [1, 3, 4]
    assert root_children([-1, 2, 1]) == []


def test_nonprojective_sentence():
    assert is_valid_tree(NONPROJ)
    assert not is_projective(NONPROJ)


def test_arc_crossing_the_root_arc_is_nonprojective():
    # root word 2; arc 3 -> 1 spans word 2, whose arc comes from 0 outside the span
    assert not is_projective([-1, 3, 0, 2])
    assert is_projective([-1, 2, 0, 2])


def _naive_is_tree(heads):
    n = len(heads) - 1
    if n < 1 or any(not 0 <= h <= n for h in heads[1:]):
        return False
    if sum(h == 0 for h in heads[1:]) != 1:
        return False
    for i in range(1, n + 1):  # every word reaches 0 in at most n steps
        node, steps = i, 0
        while node != 0 and steps <= n:
            node, steps = heads[node], steps + 1
        if node != 0:
            return False
    return True


def _naive_is_projective(heads):
    """Each arc's head dominates every word strictly between head and dependent."""
    n = len(heads) - 1
    for d in range(1, n + 1):
        h = heads[d]
        for k in range(min(h, d) + 1, max(h, d)):
            if h not in ancestors(heads, k):
                return False
    return True


def test_against_brute_force_for_all_small_arrays():
    trees = 0
    for n in range(1, 6):
        for tail in itertools.product(range(n + 1), repeat=n):
            heads = [-1, *tail]
            valid = _naive_is_tree(heads)
            assert is_valid_tree(heads) == valid, heads
            if valid:
                trees += 1
                assert find_cycle(heads) is None, heads
                assert is_projective(heads) == _naive_is_projective(heads), heads
            else:  # heads are in range here, so the reason is the root count or a cycle
                assert len(root_children(heads)) != 1 or find_cycle(heads) is not None, heads
    # labelled rooted trees with one root word on n nodes: n^(n-1)
    assert trees == sum(n ** (n - 1) for n in range(1, 6))
