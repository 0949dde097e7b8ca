"""Greedy hill-climbing: valid trees, determinism, optimality on small graphs."""
import numpy as np
import pytest
from graph_fixtures import MASK, all_trees, first_order_scorer, third_order_scorer

from models.graph.decode_mst import decode_mst
from models.graph.decoders import Scorer, decode_greedy, decode_mst_exact
from models.graph.prune import prune
from models.tree import is_valid_tree


@pytest.mark.parametrize("init", ["uniform", "first_order", "mst"])
def test_first_order_reaches_mst_optimum(rng, init):
    for _ in range(40):
        n = int(rng.integers(1, 8))
        sc = first_order_scorer(rng, n)
        res = decode_greedy(sc, {"restarts": 200, "converge": 60, "init": init})
        heads = decode_mst(sc.S)
        best = float(sc.S[heads[1:], np.arange(1, n + 1)].sum())
        assert is_valid_tree(res.heads)
        assert res.score == pytest.approx(best)


def test_third_order_finds_brute_force_optimum(rng):
    for n in (2, 3, 4, 5):
        sc = third_order_scorer(rng, n)
        best = max(sc.score(t) for t in all_trees(n))
        res = decode_greedy(sc, {"restarts": 300, "converge": 100})
        assert is_valid_tree(res.heads)
        assert res.score == pytest.approx(best, rel=1e-6)
        assert sc.score(res.heads) == pytest.approx(res.score, rel=1e-6)


def test_always_valid_tree_on_pruned_graphs(rng):
    for _ in range(30):
        n = int(rng.integers(1, 40))
        S1 = rng.normal(size=(n + 1, n + 1)) * 3
        allowed = prune(S1, 0.005, 3)
        sc = third_order_scorer(rng, n, allowed)
        for decoder, budget in ((decode_greedy, {"restarts": 5, "converge": 2}),
                                (decode_mst_exact, {})):
            res = decoder(sc, budget)
            assert is_valid_tree(res.heads), res.heads
            assert all(allowed[res.heads[m], m] for m in range(1, n + 1))


def test_deterministic_for_a_seed(rng):
    sc = third_order_scorer(rng, 25)
    a = decode_greedy(sc, {"restarts": 20, "converge": 5, "seed": 7})
    b = decode_greedy(sc, {"restarts": 20, "converge": 5, "seed": 7})
    assert np.array_equal(a.heads, b.heads)
    assert a.score == b.score
    assert a.stats["restarts_used"] == b.stats["restarts_used"]
    assert a.stats["best_restart"] == b.stats["best_restart"]


def test_stats_and_budget(rng):
    sc = third_order_scorer(rng, 12)
    res = decode_greedy(sc, {"restarts": 30, "converge": 1000})
    assert res.stats["restarts_used"] == 30
    assert 1 <= res.stats["best_restart"] <= 30
    assert 1 <= res.stats["distinct_optima"] <= 30
    assert res.stats["deadline_hit"] is False
    res = decode_greedy(sc, {"restarts": 1000, "converge": 3})
    assert res.stats["restarts_used"] < 1000


def test_deadline_returns_best_so_far(rng):
    sc = third_order_scorer(rng, 60)
    res = decode_greedy(sc, {"restarts": 10000, "converge": 10000, "deadline_ms": 1})
    assert res.stats["deadline_hit"] is True
    assert is_valid_tree(res.heads)
    assert res.stats["restarts_used"] < 10000


@pytest.mark.parametrize("budget", [{"restarts": 0}, {"restarts": -3}, {"converge": "x"},
                                    {"init": "random"}, {"init": 3}, {"deadline_ms": -1},
                                    {"seed": 1.5}])
def test_bad_budget_is_rejected(rng, budget):
    from models.graph.decoders import BudgetError

    sc = third_order_scorer(rng, 4)
    with pytest.raises(BudgetError):
        decode_greedy(sc, budget)


def test_tree_score_equals_weights_dot_features(rng):
    """The scoring walk (head_score) and the feature walk (head_parts) see the same parts."""
    from models.graph.scoring import tree_features

    for order in (1, 2, 3):
        for n in (1, 2, 5, 13):
            sc = third_order_scorer(rng, n)
            sc = Scorer(order, sc.S, sc.allowed, sc.attrs, sc.upos_prefix, sc.weights, sc.mask)
            heads = decode_mst(sc.S)
            feats = tree_features(heads, order, sc.attrs, sc.upos_prefix, np.uint64(MASK))
            dot = float(sc.weights[feats].astype(np.float64).sum())
            assert sc.score(heads) == pytest.approx(dot, rel=1e-5, abs=1e-6)
