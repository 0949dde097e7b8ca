import numpy as np
import pytest
from graph_fixtures import all_trees

from models.graph.decode_mst import decode_mst
from models.tree import is_valid_tree


def _score(S, heads):
    return float(S[heads[1:], np.arange(1, len(heads))].sum())


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7])
def test_mst_equals_brute_force(n, rng):
    trees = list(all_trees(n))
    for _ in range(6 if n == 7 else 25):
        S = rng.normal(size=(n + 1, n + 1))
        heads = decode_mst(S)
        assert is_valid_tree(heads)
        best = max(_score(S, t) for t in trees)
        assert _score(S, heads) == pytest.approx(best)


def test_mst_respects_missing_arcs(rng):
    n = 6
    S = rng.normal(size=(n + 1, n + 1))
    S[0, 1:] = -np.inf
    S[0, 3] = -5.0  # the only root arc allowed
    heads = decode_mst(S)
    assert is_valid_tree(heads)
    assert list(np.flatnonzero(heads == 0)) == [3]


def test_mst_single_root_even_when_root_arcs_dominate():
    n = 4
    S = np.zeros((n + 1, n + 1))
    S[0, 1:] = 10.0
    heads = decode_mst(S)
    assert is_valid_tree(heads)
    assert int((heads[1:] == 0).sum()) == 1


def test_mst_rejects_non_square():
    with pytest.raises(ValueError):
        decode_mst(np.zeros((3, 4)))
