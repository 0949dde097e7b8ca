"""Analysers averaged: the mean of the members' probabilities, loaded from a model's
`neural/` with its `member-k` subdirectories."""
from __future__ import annotations

import numpy as np
import pytest

from models.conllu import read_conllu
from models.errors import ModelError
from models.neural.ensemble import AnalyserEnsemble, analyser_count, load_analyser, log_mean_exp
from models.neural.network import NeuralAnalyser
from models.neural.vocab import Vocab
from tests.models.neural.test_network import CFG, TINY, _words

jax = pytest.importorskip("jax")
from models.neural import jax_net as J  # noqa: E402  (needs jax)


def _analyser(vocab, seed: int) -> NeuralAnalyser:
    params = J.init_params(jax.random.PRNGKey(seed), vocab, CFG, None)
    rng = np.random.default_rng(seed + 1)      # no zero matrices: every term counts
    return NeuralAnalyser(vocab, {k: np.asarray(v) + rng.normal(0, 0.3, np.shape(v))
                                  for k, v in params.items()})


@pytest.fixture(scope="module")
def two():
    sents = _words(read_conllu(TINY))
    vocab = Vocab.build([[(w[0], w[1], w[2], w[3], w[5]) for w in s] for s in sents])
    return sents, _analyser(vocab, 0), _analyser(vocab, 1)


def test_log_mean_exp_is_the_log_of_the_mean_probability():
    with np.errstate(divide="ignore"):
        a = np.log(np.array([[0.2, 0.8], [0.0, 1.0]], np.float32))
        b = np.log(np.array([[0.6, 0.4], [0.0, 1.0]], np.float32))
    got = log_mean_exp([a, b])
    np.testing.assert_allclose(np.exp(got), [[0.4, 0.6], [0.0, 1.0]], atol=1e-6)
    assert got[1, 0] == -np.inf and got.dtype == np.float32
    assert log_mean_exp([a]) is a


def test_the_ensemble_averages_its_members_probabilities(two):
    sents, a, b = two
    ens = AnalyserEnsemble([a, b])
    forms = [w[0] for w in sents[3]]
    x, y, e = a.analyze(forms), b.analyze(forms), ens.analyze(forms)
    for field in ("tag_logp", "feats_logp", "arc_logp"):
        mean = (np.exp(getattr(x, field)) + np.exp(getattr(y, field))) / 2
        np.testing.assert_allclose(np.exp(getattr(e, field)), mean, atol=1e-6)
    # each dependent's heads still form a distribution, with no self-arcs or root column
    assert np.allclose(np.exp(e.arc_logp[:, 1:]).sum(0), 1.0, atol=1e-5)
    assert np.all(np.isneginf(np.diag(e.arc_logp))) and np.all(np.isneginf(e.arc_logp[:, 0]))
    heads = [w[4] for w in sents[3]]
    mean = (np.exp(a.label_logp(x, heads)) + np.exp(b.label_logp(y, heads))) / 2
    np.testing.assert_allclose(np.exp(ens.label_logp(e, heads)), mean, atol=1e-6)
    assert ens.labels == a.labels
    assert np.all(ens.arc_bonus(e, 0.5) <= 0)


def test_one_analyser_twice_is_that_analyser(two):
    sents, a, _ = two
    forms = [[w[0] for w in s] for s in sents[:5]]
    for alone, pair in zip(a.analyze_batch(forms), AnalyserEnsemble([a, a]).analyze_batch(forms)):
        np.testing.assert_allclose(pair.arc_logp, alone.arc_logp, atol=1e-5)
        np.testing.assert_allclose(pair.tag_logp, alone.tag_logp, atol=1e-5)


def test_a_model_directory_loads_its_members(two, tmp_path):
    sents, a, b = two
    a.save(str(tmp_path))
    assert isinstance(load_analyser(tmp_path), NeuralAnalyser)      # one analyser
    b.save(str(tmp_path / "member-2"))
    ens = load_analyser(tmp_path)
    assert isinstance(ens, AnalyserEnsemble) and len(ens.members) == 2
    forms = [w[0] for w in sents[1]]
    want = AnalyserEnsemble([a, b]).analyze(forms).arc_logp
    np.testing.assert_allclose(ens.analyze(forms).arc_logp, want, atol=0.05)   # float16
    (tmp_path / "member-2" / "analyser.npz").unlink()
    with pytest.raises(ModelError, match="member-2 is incomplete: .*analyser.npz is missing"):
        load_analyser(tmp_path)


def test_members_of_other_vocabularies_are_refused(two):
    sents, a, _ = two
    other = Vocab.build([[(w[0], w[1], w[2], w[3], w[5]) for w in s] for s in sents[:5]])
    with pytest.raises(ModelError, match="other vocabularies"):
        AnalyserEnsemble([a, _analyser(other, 2)])


def test_the_first_members_are_a_smaller_ensemble_sharing_their_caches(two):
    sents, a, b = two
    ens = AnalyserEnsemble([a, b, a])
    assert ens.first(3) is ens and ens.first(1) is a
    pair = ens.first(2)
    assert pair.members == [a, b] and pair is ens.first(2)       # built once
    assert [analyser_count(x) for x in (None, a, pair, ens)] == [0, 1, 2, 3]
    forms = [w[0] for w in sents[2]]
    want = AnalyserEnsemble([a, b]).analyze(forms).arc_logp
    np.testing.assert_allclose(pair.analyze(forms).arc_logp, want, atol=1e-6)
    assert a.analyze(forms) is a.analyze(forms)       # the member's cache serves both
    for k in (0, 4):
        with pytest.raises(ValueError, match=f"no first {k}"):
            ens.first(k)
