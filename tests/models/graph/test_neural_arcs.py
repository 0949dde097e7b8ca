"""The neural arc scorer: numpy biaffine model, JAX training, files, graph-model scores."""
from __future__ import annotations

import os
from collections import Counter

import numpy as np
import pytest

from models.conllu import read_conllu
from models.graph.neural_arcs import LOGP_FLOOR, NeuralArcScorer
from models.text.neural_tagger import PAD, NeuralTagger
from models.text.tagger import Tagger
from models.text.word_vectors import WordVectors

TINY = os.path.join(os.path.dirname(__file__), "..", "text", "data", "tiny.conllu")


@pytest.fixture(scope="module")
def inputs():
    """A linear tagger and an (untrained) accurate tagger's inputs: vocabulary, vectors."""
    from models.text.neural_tagger_train import _columns

    sents = list(read_conllu(TINY))
    tuples = [[(w.form, w.upos, w.xpos, w.lemma, w.feats) for w in s.words] for s in sents]
    linear = Tagger.train(tuples, epochs=2, seed=0, n_bits=14, bidirectional=True)
    columns = _columns(linear)
    counts = [Counter() for _ in columns]
    for s in sents:
        for st in linear.type_strings([w.form for w in s.words]):
            for c, v in enumerate(st):
                counts[c][v] += 1
    vocab = [sorted(cnt) for cnt in counts]
    words = sorted({w.form for s in sents for w in s.words})
    vectors = WordVectors.build(words, np.random.default_rng(0).normal(size=(len(words), 12)),
                                dims=6)
    shell = NeuralTagger(linear.classes, vocab, {}, vectors, {"columns": columns})
    short = [[(w.form, w.head) for w in s.words] for s in sents if len(s.words) <= 16]
    return linear, shell, short


@pytest.fixture(scope="module")
def trained(inputs):
    pytest.importorskip("jax", reason="training needs jax: pip install -e '.[test]'")
    pytest.importorskip("optax", reason="training needs optax: pip install -e '.[test]'")
    from models.graph.neural_arcs_train import train_arc_scorer

    linear, shell, short = inputs
    scorer, info = train_arc_scorer(short, linear, shell, hidden=8, arc_dims=8, epochs=3,
                                    seed=0, dev=short[:5])
    return scorer, info


def test_training_reports_each_epoch_and_lowers_the_loss(trained):
    _, info = trained
    hist = info["history"]
    assert [h["epoch"] for h in hist] == [1, 2, 3]
    assert hist[-1]["loss"] < hist[0]["loss"]
    assert 0.0 <= hist[-1]["dev_uas_argmax"] <= 100.0


def test_log_probs_are_a_head_distribution_per_word(trained, inputs):
    scorer, _ = trained
    linear, _, short = inputs
    forms = [w[0] for w in short[0]]
    lp = scorer.log_probs(forms, linear.type_strings)
    n = len(forms)
    assert lp.shape == (n + 1, n + 1)
    assert np.all(np.isneginf(lp[:, 0]))                      # the root has no head
    assert np.all(np.isneginf(np.diag(lp)[1:]))               # no word heads itself
    assert np.allclose(np.exp(lp[:, 1:]).sum(0), 1.0, atol=1e-5)


def test_numpy_inference_equals_the_training_graph(trained, inputs):
    import jax.numpy as jnp

    from models.graph.neural_arcs_train import make_arc_forward

    scorer, _ = trained
    linear, shell, short = inputs
    forward = make_arc_forward(shell.vectors.table, len(shell.vocab), scorer.layers)
    params = {k: jnp.asarray(v) for k, v in scorer.params.items()}
    for sent in short[:4]:
        forms = [w[0] for w in sent]
        ids = shell.ids(forms, linear.type_strings)
        padded = np.vstack([ids, np.tile([PAD] * len(shell.vocab) + [0], (3, 1))])
        want = np.asarray(forward(params, jnp.asarray(padded[None]), jnp.asarray([len(forms)]),
                                  None, 1.0, 1.0))[0, :len(forms), :len(forms) + 1]
        got = scorer.log_probs_of_ids(ids)[:, 1:].T                # [dependent, head]
        finite = np.isfinite(got)
        assert np.array_equal(finite, want > -1e8)
        assert np.allclose(got[finite], want[finite], atol=1e-4)   # padding changes nothing


def test_save_load_round_trip_and_vocabulary_check(trained, inputs, tmp_path):
    scorer, _ = trained
    linear, shell, short = inputs
    scorer.save(str(tmp_path))
    back = NeuralArcScorer.load(str(tmp_path), shell)
    for sent in short[:5]:
        forms = [w[0] for w in sent]
        a, b = scorer.log_probs(forms, linear.type_strings), back.log_probs(forms,
                                                                            linear.type_strings)
        assert np.allclose(a[np.isfinite(a)], b[np.isfinite(b)], atol=2e-2)  # float16 file
    other = NeuralTagger(shell.classes, [v[:-1] for v in shell.vocab], {}, shell.vectors,
                         shell.meta)
    with pytest.raises(ValueError, match="another vocabulary"):
        NeuralArcScorer.load(str(tmp_path), other)


def test_arc_bonus_is_weighted_floored_and_zero_off_the_arcs(trained, inputs):
    scorer, _ = trained
    linear, _, short = inputs
    forms = [w[0] for w in short[1]]
    lp = scorer.log_probs(forms, linear.type_strings)
    bonus = scorer.arc_bonus(forms, linear.type_strings, 0.5)
    ok = np.isfinite(lp)
    assert np.all(bonus[~ok] == 0.0)
    assert np.allclose(bonus[ok], 0.5 * np.maximum(lp[ok], LOGP_FLOOR))
    assert bonus.min() >= 0.5 * LOGP_FLOOR


def test_graph_model_adds_the_bonus_to_its_arc_scores():
    from models.graph.model import GraphModel

    root = os.path.join(os.path.dirname(__file__), "..", "..", "..", "models", "pretrained",
                        "en_ewt", "graph")
    if not os.path.exists(os.path.join(root, "model.json")):
        pytest.skip("no shipped graph model")
    model = GraphModel.load(root)
    forms = "The cat sat on the mat .".split()
    upos = ["DET", "NOUN", "VERB", "ADP", "DET", "NOUN", "PUNCT"]
    xpos = ["DT", "NN", "VBD", "IN", "DT", "NN", "."]
    enc = model.encode(forms, None, upos, xpos)
    bonus = np.random.default_rng(0).normal(size=(8, 8))
    plain, plus = model.scorer(enc), model.scorer(enc, arc_bonus=bonus)
    ok = plain.allowed
    assert np.array_equal(plus.allowed, ok)                 # pruning keeps its own arcs
    assert np.allclose(plus.S[ok], plain.S[ok] + bonus[ok])
    assert np.all(np.isneginf(plus.S[~ok]))
    assert np.allclose(plus.first_order, plain.first_order + bonus)
