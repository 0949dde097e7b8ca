"""The accurate tagger: GloVe table, numpy BiLSTM, JAX training, ensemble, pipeline."""
from __future__ import annotations

import os

import numpy as np
import pytest

from models.text.neural_tagger import EnsembleTagger, NeuralTagger, bilstm_layer, log_softmax
from models.text.tagger import Tagger
from models.text.word_vectors import WordVectors


def _vectors(n: int = 50, dims: int = 8) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(0)
    words = ["the", "The", "cat", "dog", "sat"] + [f"w{i}" for i in range(n - 5)]
    return words, rng.normal(size=(n, 20)).astype(np.float32)


def test_word_vectors_lookup_quantization_and_round_trip(tmp_path):
    words, vecs = _vectors()
    wv = WordVectors.build(words, vecs, dims=8, source="test")
    assert wv.dims == 8 and len(wv) == len(words) - 1   # "The" folds into "the"
    rows = wv.rows(["THE", "the", "cat", "never-seen", ""])
    assert rows[0] == rows[1] > 0 and rows[2] > 0 and rows[3] == 0 and rows[4] == 0
    assert not wv.table[0].any()                  # no vector: zeros
    # int8 codes reproduce the PCA projection to within half a quantization step
    centred = vecs.astype(np.float64) - vecs.mean(0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    proj = centred @ vt[:8].T
    got = wv.table[wv.rows(["cat"])[0]]
    want = proj[words.index("cat")]
    assert np.all(np.abs(np.abs(got) - np.abs(want)) <= wv.scale / 2 + 1e-6)
    wv.save(str(tmp_path))
    back = WordVectors.load(str(tmp_path))
    assert np.array_equal(back.table, wv.table) and np.array_equal(back.keys, wv.keys)
    assert back.source == "test"


def _reference_lstm(x, wx, wh, b):
    """One direction, one step at a time, gates i, f, o, u."""
    def sig(z):
        return 1 / (1 + np.exp(-z))

    hidden = wh.shape[0]
    h, c, out = np.zeros(hidden), np.zeros(hidden), []
    for t in range(len(x)):
        g = x[t] @ wx + h @ wh + b
        i, f, o, u = (g[k * hidden:(k + 1) * hidden] for k in range(4))
        c = sig(f) * c + sig(i) * np.tanh(u)
        h = sig(o) * np.tanh(c)
        out.append(h)
    return np.array(out)


def test_bilstm_layer_runs_both_directions_like_the_textbook():
    rng = np.random.default_rng(1)
    n, d, hidden = 7, 5, 3
    x = rng.normal(size=(n, d)).astype(np.float32)
    wx = rng.normal(size=(2, d, 4 * hidden)).astype(np.float32)
    wh = rng.normal(size=(2, hidden, 4 * hidden)).astype(np.float32)
    b = rng.normal(size=(2, 4 * hidden)).astype(np.float32)
    got = bilstm_layer(x, wx, wh, b)
    forward = _reference_lstm(x, wx[0], wh[0], b[0])
    backward = _reference_lstm(x[::-1], wx[1], wh[1], b[1])[::-1]
    assert got.shape == (n, 2 * hidden)
    assert np.allclose(got, np.concatenate([forward, backward], 1), atol=1e-5)
    assert np.allclose(np.exp(log_softmax(got)).sum(1), 1.0, atol=1e-5)


@pytest.fixture(scope="module")
def trained(tiny_tuples):
    """A linear tagger and a tiny neural tagger trained on the fixture (JAX)."""
    pytest.importorskip("jax", reason="training needs jax: pip install -e '.[test]'")
    pytest.importorskip("optax", reason="training needs optax: pip install -e '.[test]'")
    from models.text.neural_tagger_train import train_neural_tagger

    linear = Tagger.train(tiny_tuples, epochs=3, seed=0, n_bits=14, bidirectional=True)
    words = sorted({w[0] for s in tiny_tuples for w in s})
    rng = np.random.default_rng(0)
    vectors = WordVectors.build(words, rng.normal(size=(len(words), 12)), dims=6)
    short = [s for s in tiny_tuples if len(s) <= 16]      # two length buckets: fast to compile
    neural, weight, info = train_neural_tagger(short, linear, vectors, hidden=8, layers=2,
                                               epochs=3, seed=0, dev=short[:5])
    return linear, neural, weight, info, short


def test_training_reports_each_epoch_and_lowers_the_loss(trained):
    _, neural, weight, info, _ = trained
    hist = info["history"]
    assert [h["epoch"] for h in hist] == [1, 2, 3]
    assert hist[-1]["loss"] < hist[0]["loss"]
    assert {"upos_neural", "xpos_neural", "upos_w6", "xpos_w6"} <= set(hist[-1])
    assert weight in (2.0, 3.0, 4.0, 6.0, 8.0, 12.0) and neural.meta["weight"] == weight


def test_numpy_inference_equals_the_training_graph(trained):
    import jax
    import jax.numpy as jnp

    from models.text.neural_tagger_train import make_forward

    linear, neural, _, _, short = trained
    forward = make_forward(neural.vectors.table, len(neural.vocab), neural.layers)
    params = {k: jnp.asarray(v) for k, v in neural.params.items()}
    for sent in short[:4]:
        forms = [w[0] for w in sent]
        ids = neural.ids(forms, linear.type_strings)
        logits = forward(params, jnp.asarray(ids[None]), jnp.asarray([len(forms)]), None,
                         1.0, 1.0)
        want = np.asarray(jax.nn.log_softmax(logits))[0]
        assert np.allclose(neural.log_probs_of_ids(ids), want, atol=1e-4)


def test_save_load_gives_identical_tags(trained, tmp_path):
    linear, neural, weight, _, short = trained
    neural.save(str(tmp_path))
    back = NeuralTagger.load(str(tmp_path))
    assert back.vocab == neural.vocab and back.classes == neural.classes
    a, b = EnsembleTagger(linear, neural, weight), EnsembleTagger(linear, back, weight)
    for sent in short:
        forms = [w[0] for w in sent]
        assert a.tag(forms) == b.tag(forms)     # weights stored as float16
        assert np.allclose(a.scores(forms), b.scores(forms), atol=1e-2)


def test_ensemble_is_the_linear_scores_plus_scaled_log_probs(trained):
    linear, neural, _, _, short = trained
    forms = [w[0] for w in short[0]]
    ens = EnsembleTagger(linear, neural, 4.0)
    want = linear.scores(forms) + neural.log_probs(forms, linear.type_strings) / 4.0
    assert np.allclose(ens.scores(forms), want)
    best, second, margin = ens.alternatives(forms)
    assert np.array_equal(best, np.argmax(want, 1)) and np.all(margin >= 0)
    assert np.all(best != second)
    assert ens.tag([]) == ([], []) and len(ens.alternatives([])[0]) == 0


def test_ensemble_refuses_a_neural_tagger_of_other_classes(trained):
    linear, neural, _, _, _ = trained
    other = NeuralTagger(list(reversed(neural.classes)), neural.vocab, neural.params,
                         neural.vectors)
    with pytest.raises(ValueError, match="other classes"):
        EnsembleTagger(linear, other, 6.0)


def test_shipped_pipeline_offers_the_accurate_tagger(shipped_dir):
    from models.graph.decoders import BudgetError
    from models.pipeline import Pipeline

    if not os.path.isdir(os.path.join(shipped_dir, "neural")):
        pytest.skip("the shipped front-end has no neural tagger")
    pipe = Pipeline.load("en_ewt")
    assert pipe.taggers == ["fast", "accurate"]
    forms = "I saw the new Fiat Punto at the dealer 's yesterday .".split()
    tree = pipe.parse_words(forms, "mst", {}, tagger="accurate")
    assert [t.upos for t in tree.tokens][:3] == ["PRON", "VERB", "DET"]
    assert all(t.xpos != "_" for t in tree.tokens)
    with pytest.raises(BudgetError, match="unknown tagger 'best'"):
        pipe.parse_words(forms, "mst", {}, tagger="best")
