"""train_frontend with a checkpoint directory: a rerun loads the parts already saved."""
from __future__ import annotations

import os

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
