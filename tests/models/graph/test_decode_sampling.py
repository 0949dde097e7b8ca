"""MCMC sampling decoder: valid trees, exactness against brute force, seeds, budgets."""
import dataclasses

import numpy as np
import pytest
from graph_fixtures import MASK, all_trees, first_order_scorer, third_order_scorer

from models.decoder_registry import DECODERS
from models.graph.decode_mst import decode_mst
from models.graph.decode_sampling import sampling_search
from models.graph.decoders import BudgetError, Scorer, decode_sampling
from models.graph.prune import all_arcs, prune
from models.graph.rng import new_state
from models.graph.scoring import new_memo
from models.graph.search_space import build_search_space
from models.graph.wilson import sample_tree
from models.tree import is_valid_tree

PROPOSALS = ("gibbs", "random_walk")




def _random_tree(sc, seed):
    space = build_search_space(sc.allowed, sc.S, "uniform")
    n1 = sc.S.shape[0]
    heads = np.empty(n1, dtype=np.int64)
    sample_tree(space.cand, space.ncand, space.cdf, space.root_cdf, new_state(seed), heads,
                np.empty(n1, dtype=np.bool_), np.empty(n1, dtype=np.int64))
    return heads


def _search(sc, start=None, seed=0, **kw):
    space = build_search_space(sc.allowed, sc.S, "uniform")
    start = decode_mst(sc.S) if start is None else start
    return sampling_search(space.cand, space.ncand, space.root_ok, sc.order, sc.S, sc.attrs,
                           sc.upos_prefix, sc.weights, sc.mask, new_memo(sc.S.shape[0] - 1),
                           start=start, seed_state=new_state(seed),
                           global_features=sc.global_features, **kw)


def _chain(sc, sweeps, **kw):
    """The chain's tree after every sweep at a constant temperature."""
    trace = np.zeros((sweeps, sc.S.shape[0]), dtype=np.int64)
    _search(sc, samples=sweeps, cooling=1.0, converge=10**9, trace=trace, chunk=1000, **kw)
    return trace


@pytest.mark.parametrize("proposal", PROPOSALS)
def test_every_sample_is_a_valid_tree_on_allowed_arcs(rng, proposal):
    for _ in range(12):
        n = int(rng.integers(1, 30))
        allowed = prune(rng.normal(size=(n + 1, n + 1)) * 3, 0.005, 4)
        sc = third_order_scorer(rng, n, allowed, scale=0.2)
        trace = _chain(sc, 40, proposal=proposal, temperature=2.0)
        for heads in trace:
            assert is_valid_tree(heads), heads
            assert all(allowed[heads[m], m] for m in range(1, n + 1))
        res = decode_sampling(sc, {"proposal": proposal, "samples": 30})
        assert is_valid_tree(res.heads) and res.heads[0] == -1
        assert res.score == pytest.approx(sc.score(res.heads), rel=1e-9, abs=1e-9)
        glob = dataclasses.replace(sc, global_features=True)   # the chain tracks its score
        tracked = _search(glob, proposal=proposal, samples=20, temperature=2.0)
        assert tracked.score == pytest.approx(glob.score(tracked.heads), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("proposal", PROPOSALS)
def test_low_temperature_first_order_reaches_mst_optimum(rng, proposal):
    """Annealed to T ~ 0 from a random tree (not the MST start the decoder uses)."""
    for i in range(25):
        n = int(rng.integers(2, 9))
        sc = first_order_scorer(rng, n)
        mst = decode_mst(sc.S)
        best = float(sc.S[mst[1:], np.arange(1, n + 1)].sum())
        res = _search(sc, start=_random_tree(sc, i), seed=i, proposal=proposal, samples=3000,
                      temperature=2.0, cooling=0.99, converge=100)
        assert res.score == pytest.approx(best), (n, res.heads, mst)
        assert sc.score(res.heads) == pytest.approx(best)
        # the registered decoder (which starts from the MST) keeps it
        assert decode_sampling(sc, {"proposal": proposal}).score == pytest.approx(best)


def _exact_distribution(sc, T):
    trees = [t for t in all_trees(sc.S.shape[0] - 1)
             if all(sc.allowed[t[m], m] for m in range(1, len(t)))]
    s = np.array([sc.score(t) for t in trees])
    p = np.exp((s - s.max()) / T)
    return {tuple(t[1:]): i for i, t in enumerate(trees)}, p / p.sum()


@pytest.mark.parametrize("n,proposal,k,pruned,own_q,glob", [
    (4, "gibbs", 4, False, False, False), (5, "gibbs", 4, True, False, False),
    (4, "random_walk", 2, False, False, False), (5, "random_walk", 2, False, True, False),
    (5, "random_walk", 3, True, True, False), (5, "gibbs", 4, False, False, True),
    (5, "random_walk", 2, False, True, True)])
def test_chain_distribution_matches_brute_force(n, proposal, k, pruned, own_q, glob):
    """The stationary distribution is exp(s/T) over all (allowed) trees: total
    variation between the chain's visits and the enumeration stays small. (With
    the proposal term dropped from the MH ratio it is 0.5 or more.) own_q: the
    walk draws from other first-order scores than S, as the decoder does; glob: the
    score has the global features (`global_features`)."""
    rng = np.random.default_rng(100 + n + k)
    allowed = all_arcs(n)
    if pruned:  # drop a few arcs, keep at least two root arcs
        allowed[rng.integers(1, n + 1, 4), rng.integers(1, n + 1, 4)] = False
        allowed[0, 1] = allowed[0, 2] = True
        allowed[np.arange(n + 1), np.arange(n + 1)] = False
    sc = dataclasses.replace(third_order_scorer(rng, n, allowed, scale=0.3),
                             global_features=glob)
    index, p = _exact_distribution(sc, 1.0)
    sweeps = 120_000 if proposal == "gibbs" else 300_000  # walks mix slower, cost less
    q = sc.S + rng.normal(size=sc.S.shape) if own_q else None
    trace = _chain(sc, sweeps, proposal=proposal, temperature=1.0, k=k, seed=n,
                   proposal_scores=q)[1000:]
    codes, counts = np.unique(trace[:, 1:] @ (n + 1) ** np.arange(n), return_counts=True)
    freq = np.zeros(len(p))
    for code, c in zip(codes, counts):
        heads = tuple(int(code) // (n + 1) ** i % (n + 1) for i in range(n))
        freq[index[heads]] = c / len(trace)
    tv = 0.5 * np.abs(freq - p).sum()
    assert tv < 0.04, tv


@pytest.mark.parametrize("proposal", PROPOSALS)
def test_fixed_seed_same_result(rng, proposal):
    sc = third_order_scorer(rng, 25, scale=0.2)
    budget = {"proposal": proposal, "seed": 11, "samples": 40, "confidence": True}
    a, b = decode_sampling(sc, budget), decode_sampling(sc, dict(budget))
    assert np.array_equal(a.heads, b.heads)
    assert a.score == b.score
    drop = {"seconds"}
    assert {k: v for k, v in a.stats.items() if k not in drop} == \
        {k: v for k, v in b.stats.items() if k not in drop}
    assert np.array_equal(_chain(sc, 30, proposal=proposal, seed=4),
                          _chain(sc, 30, proposal=proposal, seed=4))


def test_stats_and_budget(rng):
    sc = third_order_scorer(rng, 12, scale=0.2)
    res = decode_sampling(sc, {"samples": 7, "converge": 1000, "cooling": 1.0, "chains": 1})
    assert res.stats["samples_used"] == 7
    assert res.stats["proposals"] == 7 * 11  # n - 1 Gibbs proposals a sweep
    assert 0.0 <= res.stats["acceptance_rate"] <= 1.0
    assert 0 <= res.stats["best_sample"] <= 7
    assert res.stats["deadline_hit"] is False
    res = decode_sampling(sc, {"proposal": "random_walk", "samples": 5, "converge": 1000,
                               "chains": 3})
    assert res.stats["proposals"] == 3 * 5 * 3  # ceil(n / 4) walks a sweep
    assert res.stats["samples_used"] == 15 and res.stats["chains_used"] == 3
    assert 1 <= res.stats["best_chain"] <= 3
    res = decode_sampling(sc, {"samples": 100000, "converge": 3, "temperature": 0.01})
    assert res.stats["samples_used"] < 100


@pytest.mark.parametrize("proposal", PROPOSALS)
def test_more_chains_never_score_less(rng, proposal):
    """The first chain is the same run whatever `chains` is (one random stream)."""
    for _ in range(5):
        sc = third_order_scorer(rng, int(rng.integers(5, 30)), scale=0.2)
        scores = [decode_sampling(sc, {"proposal": proposal, "chains": c, "seed": 2}).score
                  for c in (1, 2, 4)]
        assert scores[0] <= scores[1] <= scores[2]


def test_deadline_returns_best_so_far(rng):
    sc = third_order_scorer(rng, 60, scale=0.2)
    res = decode_sampling(sc, {"samples": 100000, "converge": 100000, "cooling": 1.0,
                               "deadline_ms": 1})
    assert res.stats["deadline_hit"] is True
    assert is_valid_tree(res.heads)
    assert res.stats["samples_used"] < 100000


def test_one_word_sentence(rng):
    sc = third_order_scorer(rng, 1)
    for proposal in PROPOSALS:
        res = decode_sampling(sc, {"proposal": proposal, "confidence": True})
        assert list(res.heads) == [-1, 0]
        assert res.stats["confidence"] == [1.0]


@pytest.mark.parametrize("budget", [
    {"samples": 0}, {"samples": 2.5}, {"converge": 0}, {"chains": 0}, {"chains": 101},
    {"temperature": 0}, {"temperature": -1},
    {"temperature": "hot"}, {"temperature": True}, {"cooling": 0}, {"cooling": 1.5},
    {"proposal": "metropolis"}, {"proposal": 1}, {"seed": -1}, {"deadline_ms": 0},
    {"confidence": "yes"}, {"confidence": 1}])
def test_bad_budget_is_rejected(rng, budget):
    sc = third_order_scorer(rng, 4)
    with pytest.raises(BudgetError):
        decode_sampling(sc, budget)


def test_registered_with_fields_and_defaults(rng):
    assert DECODERS["sampling"] is decode_sampling
    fields = decode_sampling.names
    for f in ("samples", "temperature", "cooling", "proposal", "seed", "deadline_ms",
              "confidence", "chains", "converge"):
        assert f in fields
    defaults = decode_sampling.defaults()
    assert set(defaults) <= set(fields)
    assert is_valid_tree(decode_sampling(third_order_scorer(rng, 6), dict(defaults)).heads)


@pytest.mark.parametrize("proposal", PROPOSALS)
def test_first_order_model_guides_but_never_leaves_the_allowed_arcs(rng, proposal):
    """The decoder starts from, and walks with, sc.first_order (all arcs scored,
    as the pruner gives them) restricted to the allowed arcs."""
    for _ in range(10):
        n = int(rng.integers(2, 25))
        allowed = prune(rng.normal(size=(n + 1, n + 1)) * 3, 0.005, 3)
        base = third_order_scorer(rng, n, allowed, scale=0.2)
        S1 = rng.normal(size=(n + 1, n + 1)) * 3
        sc = Scorer(3, base.S, allowed, base.attrs, base.upos_prefix, base.weights, MASK,
                    first_order=S1)
        res = decode_sampling(sc, {"proposal": proposal, "samples": 20})
        assert is_valid_tree(res.heads)
        assert all(allowed[res.heads[m], m] for m in range(1, n + 1))
