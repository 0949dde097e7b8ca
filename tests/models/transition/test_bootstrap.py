"""Bootstrapping: exploration instances come from the model's own sequences and carry
only oracle moves that are valid in their state."""
from itertools import islice

import numpy as np
import pytest

from models.conllu import read_conllu
from models.transition.bootstrap import bootstrap, explore_examples
from models.transition.examples import Examples, explore_room, valid_moves
from models.transition.system import action_index
from models.transition.train import _encode, build_examples, evaluate, train
from tests.conftest import record_bars


@pytest.fixture(scope="module")
def setup(data_dir):
    path = data_dir / "en_ewt" / "train.conllu"
    if not path.exists():
        pytest.skip("en_ewt not present")
    sents = list(islice(read_conllu(str(path)), 260))
    tr, dev = sents[:200], sents[200:]
    model = train(tr, None, None, epochs=1, n_rows=1 << 16, alpha=0.05)
    attrs = [_encode(s) for s in tr]
    gold, golds = build_examples(tr, attrs, model.labels, model.atype, model.alabel,
                                 model.table, model.n_rows, explore=True)
    return model, tr, dev, attrs, gold, golds


def _action_index(model):
    return action_index(model.atype, model.alabel, len(model.labels))


def _explored_alone(model, golds, attrs):
    """Exploration's instances written into arrays of their own."""
    empty = Examples.empty(explore_room(golds), model.table.shape[0], len(model.atype))
    return explore_examples(model, golds, attrs, _action_index(model), empty).filled()


def test_explored_instances_are_valid_oracle_moves(setup):
    model, _tr, _dev, attrs, gold, golds = setup
    Xe, ye, Ve = _explored_alone(model, golds, attrs)
    assert len(ye) > 0.8 * gold.n             # most states keep a valid oracle move
    valid = valid_moves(Ve, len(model.atype))
    assert valid[np.arange(len(ye)), ye].all()   # the label is always a valid move
    assert ((Xe >= 0) & (Xe < model.n_rows)).all()


def test_explored_instances_follow_the_gold_ones_in_their_arrays(setup):
    """Exploration writes after the gold instances, in the arrays that hold them: the
    same rows as concatenating the two, without a copy; a second round overwrites
    the first's rows, and arrays with no room are refused."""
    model, _tr, _dev, attrs, gold, golds = setup
    alone = _explored_alone(model, golds, attrs)
    before = [a.copy() for a in gold.filled()]
    union = explore_examples(model, golds, attrs, _action_index(model), gold)
    assert union.X is gold.X and union.n == gold.n + len(alone[1])
    for u, g, e in zip(union.filled(), before, alone):
        assert np.array_equal(u, np.concatenate([g, e]))
    again = explore_examples(model, golds, attrs, _action_index(model), gold)
    assert again.n == union.n
    full = gold._replace(n=len(gold.y) - 1)
    with pytest.raises(ValueError, match="room to explore"):
        explore_examples(model, golds, attrs, _action_index(model), full)


def test_bootstrap_keeps_the_best_round(setup):
    model, _tr, dev, attrs, gold, golds = setup
    dattrs = [_encode(s) for s in dev]

    def score(m):
        return evaluate(m, dev, dattrs)[0]

    best, history = bootstrap(model, golds, attrs, gold, score, rounds=1, epochs=1, alpha=0.05,
                              rho=0.1, eps=1e-3)
    assert history[0][0] == 0 and len(history) == 2
    assert score(best) == pytest.approx(max(u for _, u in history))


def test_training_resumes_from_its_checkpoints(setup, tmp_path, monkeypatch):
    """The model after the epochs and after each round is kept: a second run reads
    them instead of training, and gives the same weights."""
    _model, tr, dev, _attrs, _gold, _golds = setup
    kw = dict(epochs=1, n_rows=1 << 16, alpha=0.05, bootstrap_rounds=2, bootstrap_epochs=1,
              checkpoint_dir=tmp_path)
    first = train(tr, dev, None, **kw)
    assert {p.name for p in tmp_path.iterdir()} == {"epochs.npz", "bootstrap.npz"}
    import models.transition.train as t

    def no_training(*args, **kwargs):
        raise AssertionError("trained again")

    monkeypatch.setattr(t, "adagrad_epoch", no_training)
    monkeypatch.setattr("models.transition.bootstrap.adagrad_epoch", no_training)
    again = train(tr, dev, None, **kw)
    assert np.array_equal(again.dense_weights(), first.dense_weights())


def test_rows_sized_to_the_words_and_actions(setup):
    """n_rows=None (the build's choice): `auto_bits` of the training words and the
    actions, as the tagger's rows are sized, but with two tables of at most 2**26 cells:
    5,000 sentences of 28 words get 2**19 rows where the tagger gets 2**20."""
    from models.text.tagger import auto_bits
    from models.transition.train import MAX_CELLS
    _model, tr, _dev, _attrs, _ex, _golds = setup
    sized = train(tr, None, None, epochs=1, n_rows=None, alpha=0.05)
    words = sum(len(s.words) for s in tr)
    assert sized.n_rows == 1 << auto_bits(words, len(sized.atype), MAX_CELLS) == 1 << 16
    assert auto_bits(140_385, 109) == 20 and auto_bits(140_385, 109, MAX_CELLS) == 19
    assert auto_bits(37_522, 80, MAX_CELLS) == 19                 # tr_imst: as before


def test_checkpoints_keep_sparse_weights_and_read_dense_ones(tmp_path):
    """Training keeps its best weights sparse (float16, as the model file), and reads a
    checkpoint of the dense table an earlier version wrote."""
    import json

    from models.transition.classifier import compact, flat_weights, sparse_weights
    from models.transition.train import _Checkpoint

    W = np.zeros((70_000, 5), np.float32)        # more rows than one block of 2**15
    W[[3, 3, 40, 69_999], [0, 4, 2, 1]] = [0.5, -1.25, 1e-3, 2.0]
    ckpt = _Checkpoint(tmp_path)
    ckpt.save("epochs", sparse_weights(W), {"training": {"best_epoch": 2}})
    (gaps, value), meta = ckpt.load("epochs")
    assert list(gaps) == [15, 4, 183, 349_996 - 202] and meta["training"]["best_epoch"] == 2
    flat, vals = flat_weights(*compact(gaps, value, *W.shape))
    assert list(flat) == [15, 19, 202, 349_996]
    assert np.array_equal(vals, W.ravel()[flat].astype(np.float16).astype(np.float32))
    np.savez(tmp_path / "bootstrap.npz", W=W, meta=np.array(json.dumps({"stopped": True})))
    (gaps2, value2), meta = ckpt.load("bootstrap")
    assert np.array_equal(gaps2, gaps) and np.array_equal(value2, value)
    assert meta == {"stopped": True}


def test_the_bar_ends_full_when_a_losing_round_ends_bootstrapping(setup, monkeypatch):
    """The bar plans every round; the first round that loses on dev ends the training,
    and the bar with it."""
    import models.transition.train as t

    _model, tr, dev, _attrs, _gold, _golds = setup
    bars, scores = record_bars(monkeypatch, t), iter([60.0] + [50.0] * 10)
    monkeypatch.setattr(t, "evaluate", lambda *args: (next(scores), 0.0, 0.0, 0.0))
    model = train(tr, dev, None, epochs=1, n_rows=1 << 16, alpha=0.05, bootstrap_rounds=3,
                  bootstrap_epochs=1)
    assert model.meta["training"]["bootstrapping"]["rounds_run"] == 1
    assert len(bars) == 1 and bars[0].n == bars[0].total == 4
