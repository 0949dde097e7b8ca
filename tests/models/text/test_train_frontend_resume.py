"""train_frontend with a checkpoint directory: a rerun loads the parts already saved."""
from __future__ import annotations

import os

from models.progress import progress_bar
from models.text import train as T

TINY = os.path.join(os.path.dirname(__file__), "data", "tiny.conllu")


def test_a_rerun_loads_the_saved_parts(tmp_path, monkeypatch):
    first = T.train_frontend(TINY, None, str(tmp_path / "fe"), epochs=2, word_classes=None,
                             checkpoints=str(tmp_path / "ck"))
    assert sorted(os.listdir(tmp_path / "ck")) == ["feats", "lemmatizer", "tagger", "tokenizer"]

    def no_training(*args, **kwargs):
        raise AssertionError("trained again")

    monkeypatch.setattr(T, "train_tokenizer", no_training)
    monkeypatch.setattr(T.Tagger, "train", no_training)
    monkeypatch.setattr(T.Lemmatizer, "train", no_training)
    monkeypatch.setattr(T.FeatsGuesser, "train", no_training)
    again = T.train_frontend(TINY, None, str(tmp_path / "fe"), epochs=2, word_classes=None,
                             checkpoints=str(tmp_path / "ck"))
    assert again.keys() == first.keys()


def test_the_bar_ends_full_whether_parts_are_trained_or_loaded(tmp_path, monkeypatch):
    """Every part moves the front-end's bar by its share (the tokenizer by
    TOKENIZER_STEPS, in three moves as it trains), so the bar ends at its total."""
    bars, moves = [], []

    def recording(*args, **kwargs):
        bar = progress_bar(*args, **kwargs)
        update = bar.update
        bar.update = lambda n=1: (moves.append(n), update(n))[1]
        bars.append(bar)
        return bar

    monkeypatch.setattr(T, "progress_bar", recording)
    for _ in range(2):
        T.train_frontend(TINY, None, str(tmp_path / "fe"), epochs=2, word_classes=None,
                         checkpoints=str(tmp_path / "ck"))
    assert len(bars) == 2 and all(bar.n == bar.total for bar in bars)
    assert moves[:3] == [1, 2, T.TOKENIZER_STEPS - 3]   # the tokenizer, trained
