"""Per-arc confidence of the sampling and greedy decoders."""
import numpy as np
import pytest
from graph_fixtures import all_trees, first_order_scorer, third_order_scorer
from test_decode_sampling import _search

from models.graph.confidence import optima_confidence, sample_confidence
from models.graph.decoders import BudgetError, decode_greedy, decode_sampling


@pytest.mark.parametrize("decoder", [decode_greedy, decode_sampling])
def test_confidence_is_a_probability_per_word(rng, decoder):
    for n in (1, 2, 7, 30):
        sc = third_order_scorer(rng, n, scale=0.1)
        res = decoder(sc, {"confidence": True})
        conf = res.stats["confidence"]
        assert isinstance(conf, list) and len(conf) == n
        assert all(isinstance(c, float) and 0.0 <= c <= 1.0 for c in conf)
        assert res.stats["confidence_samples"] >= 1


@pytest.mark.parametrize("decoder", [decode_greedy, decode_sampling])
def test_confidence_does_not_change_the_tree(rng, decoder):
    sc = third_order_scorer(rng, 20, scale=0.1)
    plain = decoder(sc, {"seed": 3})
    conf = decoder(sc, {"seed": 3, "confidence": True})
    assert np.array_equal(plain.heads, conf.heads)
    assert plain.score == conf.score
    assert "confidence" not in plain.stats


@pytest.mark.parametrize("decoder", [decode_greedy, decode_sampling])
def test_one_when_every_sample_agrees(rng, decoder):
    """Margins of 1000 per arc: no sample and no restart leaves the optimum."""
    sc = first_order_scorer(rng, 8)
    S = sc.S * 0.01
    S[sc.S == -np.inf] = -np.inf
    heads = np.array([-1, 2, 0, 2, 3, 3, 5, 5, 7])
    S[heads[1:], np.arange(1, 9)] = 1000.0
    sc = type(sc)(1, S, sc.allowed, sc.attrs, sc.upos_prefix, sc.weights, sc.mask)
    res = decoder(sc, {"confidence": True})
    assert np.array_equal(res.heads, heads)
    assert res.stats["confidence"] == [1.0] * 8


def test_sampling_confidence_estimates_the_head_marginal():
    """Long confidence chain on n = 4: the agreement fractions approach the exact
    marginals p(head of m = decoded head) under exp(s/T), by enumeration."""
    rng = np.random.default_rng(7)
    sc = third_order_scorer(rng, 4, scale=0.3)
    T = 1.0
    res = _search(sc, samples=50, confidence_sweeps=60_000, confidence_temperature=T)
    trees = list(all_trees(4))
    s = np.array([sc.score(t) for t in trees])
    p = np.exp((s - s.max()) / T)
    p /= p.sum()
    exact = [float(sum(pi for pi, t in zip(p, trees) if t[m] == res.heads[m]))
             for m in range(1, 5)]
    conf = sample_confidence(res.agree, res.kept)
    assert res.kept == 60_000 - 60_000 // 5
    assert conf == pytest.approx(exact, abs=0.02)


def test_sample_confidence_fixture():
    agree = np.array([0.0, 40.0, 10.0, 0.0, 40.0])
    assert sample_confidence(agree, 40) == [1.0, 0.25, 0.0, 1.0]
    assert sample_confidence(agree, 0) is None
    assert sample_confidence(None, 10) is None


def test_optima_confidence_fixture():
    heads = np.array([-1, 2, 0, 2])
    optima = np.array([[-1, 2, 0, 2], [-1, 0, 1, 1], [-1, 2, 0, 1]])
    scores = np.array([3.0, 3.0 - np.log(2.0), 3.0 - np.log(4.0)])  # weights 4 : 2 : 1
    conf = optima_confidence(optima, scores, heads, tau=1.0)
    assert conf == pytest.approx([5 / 7, 5 / 7, 4 / 7])
    # higher tau flattens the weights towards the share of optima that agree
    assert optima_confidence(optima, scores, heads, tau=1e9) == pytest.approx([2 / 3, 2 / 3, 1 / 3])
    assert optima_confidence(optima[:1], scores[:1], heads) == [1.0, 1.0, 1.0]


def test_deadline_before_any_confidence_sample_gives_none(rng):
    sc = third_order_scorer(rng, 60, scale=0.2)
    res = decode_sampling(sc, {"confidence": True, "samples": 100000, "converge": 100000,
                               "deadline_ms": 0.001})
    assert res.stats["deadline_hit"] is True
    assert res.stats["confidence"] is None
    assert res.stats["confidence_samples"] == 0


@pytest.mark.parametrize("decoder", [decode_greedy, decode_sampling])
@pytest.mark.parametrize("value", ["true", 1, 0, None])
def test_confidence_must_be_a_bool(rng, decoder, value):
    sc = third_order_scorer(rng, 3)
    with pytest.raises(BudgetError):
        decoder(sc, {"confidence": value})
