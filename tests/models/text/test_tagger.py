from __future__ import annotations

import numpy as np

from models.text.scoring import accuracy
from models.text.tagger import Tagger, _shape


def test_shape_compresses_character_classes():
    assert _shape("McDonald's") == "XxXx'x"
    assert _shape("1,000.50") == "d,d.d"


def test_tagger_learns_tiny_fixture(tiny_tuples):
    tagger = Tagger.train(tiny_tuples, epochs=5, seed=0, n_bits=16)
    gold_u = [[w[1] for w in s] for s in tiny_tuples]
    gold_x = [[w[2] for w in s] for s in tiny_tuples]
    pred = [tagger.tag([w[0] for w in s]) for s in tiny_tuples]
    assert accuracy(gold_u, [p[0] for p in pred]) > 0.95
    assert accuracy(gold_x, [p[1] for p in pred]) > 0.95
    assert tagger.tag([]) == ([], [])


def test_training_is_reproducible(tiny_tuples):
    a = Tagger.train(tiny_tuples[:10], epochs=2, seed=3, n_bits=14)
    b = Tagger.train(tiny_tuples[:10], epochs=2, seed=3, n_bits=14)
    assert np.array_equal(a.W, b.W)


def test_save_load_gives_identical_tags(tmp_path, tiny_tuples):
    tagger = Tagger.train(tiny_tuples, epochs=3, seed=0, n_bits=16)
    tagger.save(str(tmp_path))
    again = Tagger.load(str(tmp_path))
    for forms in (["The", "preacher", "was", "killed", "."], ["Unseen", "zorbles", "fly"]):
        assert again.tag(forms) == tagger.tag(forms)
    for s in tiny_tuples:
        forms = [w[0] for w in s]
        assert again.tag(forms) == tagger.tag(forms)


def test_stacked_tagger_round_trip(tmp_path, tiny_tuples):
    tagger = Tagger.train(tiny_tuples[:20], epochs=2, seed=0, n_bits=14, stack_folds=2)
    assert tagger.first is not None
    tagger.save(str(tmp_path))
    again = Tagger.load(str(tmp_path))
    forms = [w[0] for w in tiny_tuples[25]]
    assert again.tag(forms) == tagger.tag(forms)


def test_shipped_tagger(shipped_dir):
    tagger = Tagger.load(f"{shipped_dir}/tagger")
    upos, xpos = tagger.tag(["The", "cat", "sat", "on", "the", "mat", "."])
    assert upos == ["DET", "NOUN", "VERB", "ADP", "DET", "NOUN", "PUNCT"]
    assert xpos == ["DT", "NN", "VBD", "IN", "DT", "NN", "."]


def test_bidirectional_tagger_round_trip(tmp_path, tiny_tuples):
    tagger = Tagger.train(tiny_tuples, epochs=3, seed=0, n_bits=15, bidirectional=True)
    assert tagger.backward is not None
    tagger.save(str(tmp_path))
    again = Tagger.load(str(tmp_path))
    for s in tiny_tuples:
        forms = [w[0] for w in s]
        assert again.tag(forms) == tagger.tag(forms)


def test_concurrent_tagging_matches_sequential(tiny_tuples):
    """Regression: the word-type cache is shared; threads must not corrupt it."""
    from concurrent.futures import ThreadPoolExecutor

    tagger = Tagger.train(tiny_tuples, epochs=2, seed=0, n_bits=14)
    batches = [[f"new{j}w{i}" for i in range(30)] + [w[0] for w in s]
               for j, s in enumerate(tiny_tuples)]
    fresh = Tagger(tagger.classes, tagger.n_bits, tagger.W, ambiguity=tagger.ambiguity)
    with ThreadPoolExecutor(4) as pool:
        parallel = list(pool.map(fresh.tag, batches))
    assert parallel == [tagger.tag(b) for b in batches]
