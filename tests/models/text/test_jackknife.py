from __future__ import annotations

import numpy as np
import pytest

from models.text.jackknife import fold_ids, jackknife_tags


def test_fold_ids_partition_evenly():
    folds = fold_ids(23, 5, seed=1)
    assert sorted(np.bincount(folds).tolist()) == [4, 4, 5, 5, 5]
    assert np.array_equal(folds, fold_ids(23, 5, seed=1))


class _Recorder:
    """A fake model: remembers which sentences it was trained on."""

    def __init__(self, train, log):
        self.seen = {w[0] for s in train for w in s}
        self.id = len(log)
        log.append(self)

    def tag(self, forms):
        assert forms[0] not in self.seen, "tagged a sentence it was trained on"
        return [f"m{self.id}"] * len(forms), ["X"] * len(forms)


def test_every_sentence_tagged_once_by_a_model_that_did_not_see_it():
    sentences = [[(f"s{i}", "NOUN", "NN"), ("w", "VERB", "VB")] for i in range(17)]
    log: list = []
    tagged = jackknife_tags(sentences, k=4, seed=0, train_fn=lambda tr: _Recorder(tr, log))
    assert len(log) == 4
    assert len(tagged) == len(sentences)
    for i, (upos, xpos) in enumerate(tagged):
        assert len(upos) == len(xpos) == 2
        model = log[int(upos[0][1:])]
        assert f"s{i}" not in model.seen
        # trained on all the other folds
        assert len(model.seen) - 1 >= len(sentences) - (len(sentences) + 3) // 4
    counts = np.bincount([int(u[0][1:]) for u, _ in tagged])
    assert counts.sum() == 17 and counts.min() >= 4


def test_jackknife_with_real_tagger(tiny_tuples):
    from models.text.tagger import Tagger

    tagged = jackknife_tags(tiny_tuples[:12], k=3, seed=0,
                            train_fn=lambda tr: Tagger.train(tr, epochs=2, n_bits=14))
    assert [len(u) for u, _ in tagged] == [len(s) for s in tiny_tuples[:12]]


def test_jackknife_needs_two_sentences():
    with pytest.raises(ValueError):
        jackknife_tags([[("a", "X", "X")]], k=2)


def test_finished_folds_are_read_back_not_retrained(tmp_path):
    sentences = [[(f"s{i}", "NOUN", "NN"), ("w", "VERB", "VB")] for i in range(17)]
    log: list = []
    first = jackknife_tags(sentences, k=4, seed=2, train_fn=lambda t: _Recorder(t, log),
                           checkpoints=str(tmp_path))
    assert len(log) == 4 and len(list(tmp_path.iterdir())) == 4
    (tmp_path / "fold-3-of-4.json").unlink()          # as if stopped during the last fold
    again = jackknife_tags(sentences, k=4, seed=2, train_fn=lambda t: _Recorder(t, log),
                           checkpoints=str(tmp_path))
    assert len(log) == 5                               # only the missing fold trained
    assert [u for u, _ in again if u[0] != "m4"] == [u for u, _ in first if u[0] != "m3"]
