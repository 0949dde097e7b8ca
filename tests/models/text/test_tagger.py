from __future__ import annotations

import itertools
import json
import os

import numpy as np
import pytest

from models.text import _tagger_kernels as K
from models.text._conllu import iter_conllu
from models.text.scoring import accuracy
from models.text.shape import char_classes
from models.text.tagger import Tagger
from models.text.tagger_weights import compact_weights

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
DEV = os.path.join(ROOT, "..", "shared", "data", "en_ewt", "dev.conllu")


def test_shape_compresses_character_classes():
    assert char_classes("McDonald's", 12) == "XxXx'x"
    assert char_classes("1,000.50", 12) == "d,d.d"


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
    tagger.save(str(tmp_path), prune=0.0)  # the default prune is a size choice for en_ewt
    again = Tagger.load(str(tmp_path))
    for forms in (["The", "preacher", "was", "killed", "."], ["Unseen", "zorbles", "fly"]):
        assert again.tag(forms) == tagger.tag(forms)
    for s in tiny_tuples:
        forms = [w[0] for w in s]
        assert again.tag(forms) == tagger.tag(forms)


def test_stacked_tagger_round_trip(tmp_path, tiny_tuples):
    tagger = Tagger.train(tiny_tuples[:20], epochs=2, seed=0, n_bits=14, stack_folds=2)
    assert tagger.first is not None
    tagger.save(str(tmp_path), prune=0.0)
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

    tagger = Tagger.train(tiny_tuples, epochs=2, seed=0, n_bits=14, upos=False)
    batches = [[f"new{j}w{i}" for i in range(30)] + [w[0] for w in s]
               for j, s in enumerate(tiny_tuples)]
    fresh = Tagger(tagger.classes, tagger.n_bits, tagger.W, ambiguity=tagger.ambiguity)
    with ThreadPoolExecutor(4) as pool:
        parallel = list(pool.map(fresh.tag, batches))
    assert parallel == [tagger.tag(b) for b in batches]


def _dense_from_file(directory: str) -> np.ndarray:
    """Dense weights read from a model file as the dense loader did."""
    with open(os.path.join(directory, "tagger.json"), encoding="utf-8") as f:
        h = json.load(f)
    data = np.load(os.path.join(directory, "tagger.npz"))
    W = np.zeros((1 << h["n_bits"]) * len(h["classes"]), np.float32)
    W[np.cumsum(data["delta"].astype(np.int64))] = data["value"].astype(np.float32)
    return W.reshape(1 << h["n_bits"], len(h["classes"]))


def _reference_scores(tagger: Tagger, W: np.ndarray, forms: list[str]) -> np.ndarray:
    """Greedy left-to-right scores with dense W, in numpy: float32 sums of the rows
    of each position's features, in the kernels' order."""
    tf = tagger._type_features(forms)
    rows = K.static_rows(tf, tagger._static, tagger._pairs, tagger.mask)
    n_classes = W.shape[1]
    out = np.zeros((len(forms), n_classes), np.float32)
    trows = np.empty(K.N_TAG_FEATS, np.int64)
    p1, p2 = n_classes, n_classes + 1
    for i in range(len(forms)):
        K._tag_rows(tf, i, p1, p2, n_classes, tagger.mask, trows)
        for b in list(rows[i]) + list(trows):
            out[i] += W[b]
        p2, p1 = p1, int(np.argmax(out[i]))
    return out


def _array_bytes(tagger: Tagger | None) -> int:
    if tagger is None:
        return 0
    arrays = [v for obj in (tagger, tagger._cache) for v in vars(obj).values()
              if isinstance(v, np.ndarray)]
    return sum(a.nbytes for a in arrays) + _array_bytes(tagger.backward) + \
        _array_bytes(tagger.first)


def test_compact_weights_give_the_dense_scores(tiny_tuples):
    """Unpruned float32 weights with dense, pair-stored and all-zero rows."""
    tagger = Tagger.train(tiny_tuples, epochs=3, seed=0, n_bits=14, upos=False)
    W = tagger.W
    flat = np.flatnonzero(W)
    compact = compact_weights(flat, W.reshape(-1)[flat], W.shape[0], W.shape[1])
    row_of, Wc, sp_start = compact[:3]
    assert len(Wc) > 0 and len(sp_start) > 1 and (row_of == -1).any()
    small = Tagger(tagger.classes, 14, ambiguity=tagger.ambiguity, compact=compact)
    assert small.W is None and np.array_equal(small.dense_weights(), W)
    for s in tiny_tuples + [[("Unseen",), ("zorbles",), ("fly",)]]:
        forms = [w[0] for w in s]
        assert np.array_equal(small._scores(forms), tagger._scores(forms))
        assert np.array_equal(small._scores(forms), _reference_scores(tagger, W, forms))
        assert np.array_equal(small.tag_classes(forms), tagger.tag_classes(forms))


def test_loaded_tagger_is_compact(tmp_path, tiny_tuples):
    tagger = Tagger.train(tiny_tuples, epochs=2, seed=0, n_bits=14, bidirectional=True)
    tagger.save(str(tmp_path / "a"))
    again = Tagger.load(str(tmp_path / "a"))
    assert again.W is None and again.backward.W is None
    again.save(str(tmp_path / "b"))  # saved from the compact weights: same files
    for sub in ("", "backward"):
        a, b = (np.load(str(tmp_path / d / sub / "tagger.npz")) for d in "ab")
        assert all(np.array_equal(a[k], b[k]) for k in ("delta", "value"))


def test_shipped_tagger_arrays_are_small(shipped_dir):
    """The dense weights were 2 x 428 MB (forward + backward, 2**20 x 102 float32)."""
    tagger = Tagger.load(f"{shipped_dir}/tagger")
    assert tagger.backward is not None
    assert _array_bytes(tagger) < 150e6


def test_shipped_tagger_compact_tags_equal_dense(shipped_dir):
    """First 200 en_ewt dev sentences: same scores (to the bit) and tags as dense W."""
    if not os.path.exists(DEV):
        pytest.skip(f"no {DEV}")
    sentences = [[w.form for w in s.words] for s in itertools.islice(iter_conllu(DEV), 200)]
    tagger = Tagger.load(f"{shipped_dir}/tagger")
    dense_scores = []
    for direction, sub in ((tagger, ""), (tagger.backward, "backward")):
        W = _dense_from_file(os.path.join(shipped_dir, "tagger", sub))
        dense = Tagger(tagger.classes, tagger.n_bits, W, ambiguity=direction.ambiguity,
                       word_classes=direction.word_classes)
        scores = []
        for k, forms in enumerate(sentences):
            forms = forms if direction is tagger else forms[::-1]
            s = direction._scores(forms)
            assert np.array_equal(s, dense._scores(forms))
            if k % 4 == 0:  # the numpy reference is slow
                assert np.array_equal(s, _reference_scores(direction, W, forms))
            scores.append(s)
        dense_scores.append(scores)
        del W, dense
    for forms, fwd, bwd in zip(sentences, *dense_scores):
        # the UPOS-only partner (compact weights too) adds its scores where the model has one
        partner = 0 if tagger.upos is None else tagger.upos.scores(forms)[:, tagger._upos_of]
        expected = [tagger.classes[c] for c in np.argmax(fwd + bwd[::-1] + partner, axis=1)]
        upos, xpos = tagger.tag(forms)
        assert list(zip(upos, xpos)) == expected


def test_passive_aggressive_update_gives_margin_one():
    """One PA step on one token from zero weights: the gold class then beats the
    violator (the best other class) by exactly 1: tau = loss / (2 * n_features)."""
    n_classes, mask = 5, (1 << 16) - 1
    tf_all = np.arange(5 * 13, dtype=np.int64).reshape(5, 13) * 7919  # one token + padding
    static = np.array([[0, 0], [0, 1], [-1, 2], [1, 3]], np.int64)  # (offset, column)
    pairs = np.array([[0, 4, -2, 5]], np.int64)
    rows = K.static_rows(tf_all, static, pairs, mask)  # what train_epoch hashes in turn
    trows = np.empty(K.N_TAG_FEATS, np.int64)
    K._tag_rows(tf_all, 0, n_classes, n_classes + 1, n_classes, mask, trows)
    assert len(set(trows.tolist()) | set(rows[0].tolist())) == rows.shape[1] + len(trows)
    W = np.zeros((mask + 1, n_classes), np.float32)
    U = np.zeros_like(W)
    gold = np.array([3], np.int64)
    step, errors = K.train_epoch(tf_all, np.array([0, 5]), gold, np.array([0]), static,
                                 pairs, W, U, 1, mask)
    assert (step, errors) == (2, 1)  # argmax of all-zero scores is class 0: an error
    scores = W[np.concatenate([rows[0], trows])].sum(axis=0)
    assert scores[3] == pytest.approx(0.5) and scores[0] == pytest.approx(-0.5)
    assert np.delete(scores, [0, 3]).max() == 0.0  # only gold and violator move
    # second pass: no error, the next violator (class 1, score 0) is pushed to margin 1
    step, errors = K.train_epoch(tf_all, np.array([0, 5]), gold, np.array([0]), static,
                                 pairs, W, U, step, mask)
    scores = W[np.concatenate([rows[0], trows])].sum(axis=0)
    assert errors == 0 and scores[3] - scores[1] == pytest.approx(1.0)


def test_a_treebank_without_tags_gives_one_class_and_no_doubt(tiny_tuples):
    """UPOS and XPOS all `_`: one class, so `alternatives` offers it twice with an
    infinite margin, and the parser never re-tags (the build's calibration once
    failed here on a second class that did not exist)."""
    untagged = [[(w[0], "_", "_") + tuple(w[3:]) for w in s] for s in tiny_tuples]
    tagger = Tagger.train(untagged, epochs=2, seed=0, n_bits=16)
    forms = [w[0] for w in tiny_tuples[0]]
    best, second, margin = tagger.alternatives(forms)
    assert tagger.classes == [("_", "_")]
    assert (best == 0).all() and (second == 0).all() and np.isinf(margin).all()
    assert tagger.tag(forms) == (["_"] * len(forms), ["_"] * len(forms))


def test_one_class_learns_no_weights_and_compacts(tiny_tuples):
    """One class has no violator: training once read and wrote a second column that
    did not exist (numba does not check bounds), so the weights were garbage or none,
    and a tagger with no weights failed to compact (a flaky build test)."""
    untagged = [[(w[0], "_", "_") + tuple(w[3:]) for w in s] for s in tiny_tuples]
    dense = Tagger.train(untagged, epochs=2, seed=0, n_bits=14)
    assert not dense.W.any()
    tagger = Tagger.train(untagged, epochs=2, seed=0, n_bits=14, bidirectional=True)
    assert tagger.W is None and len(tagger.nonzero_weights()[0]) == 0
    forms = [w[0] for w in tiny_tuples[1]]
    assert tagger.tag(forms) == (["_"] * len(forms), ["_"] * len(forms))


def test_compact_weights_of_no_weights():
    row_of, Wc, sp_start, sp_cls, sp_val = compact_weights(
        np.zeros(0, np.int64), np.zeros(0, np.float32), 16, 3)
    assert (row_of == -1).all() and Wc.shape == (0, 3)
    assert sp_start.tolist() == [0] and len(sp_cls) == len(sp_val) == 0


def test_feature_rows_shrink_for_a_thousand_tag_classes():
    """A tagset of positional XPOS (about a thousand classes) gets fewer hashed rows,
    so that training's two dense matrices stay within `MAX_CELLS` each; the four
    treebanks here (16 to 183 classes) keep the rows their size gives them."""
    from models.text.tagger import MAX_CELLS, auto_bits
    assert auto_bits(204_577, 102) == 20                 # en_ewt
    assert auto_bits(22_432, 183) == 18                  # nl_lassysmall
    assert auto_bits(37_522, 59) == 19                   # tr_imst
    assert auto_bits(37_522, 981) == 17                  # tr_imst with XPOS = UPOS|FEATS
    assert (1 << auto_bits(1_000_000, 3_000)) * 3_000 <= MAX_CELLS


def test_a_upos_tagger_joins_where_xpos_splits_upos(tmp_path, tiny_tuples):
    """The tiny treebank's (UPOS, XPOS) classes outnumber its UPOS values, so a
    UPOS-only tagger adds its scores to the joint ones, and survives save/load."""
    from models.text.tagger import wants_upos
    assert wants_upos(tiny_tuples)
    tagger = Tagger.train(tiny_tuples, epochs=3, seed=0, n_bits=14, bidirectional=True)
    joint = Tagger.train(tiny_tuples, epochs=3, seed=0, n_bits=14, bidirectional=True,
                         upos=False)
    assert tagger.upos is not None and joint.upos is None
    names = sorted({w[1] for s in tiny_tuples for w in s})
    assert [u for u, _ in tagger.upos.classes] == names
    forms = [w[0] for w in tiny_tuples[0]]
    upos_scores = tagger.upos.scores(forms)[:, [names.index(u) for u, _ in tagger.classes]]
    assert np.allclose(tagger.scores(forms), joint.scores(forms) + upos_scores)
    tagger.save(str(tmp_path / "t"))
    loaded = Tagger.load(str(tmp_path / "t"))
    assert loaded.upos is not None and loaded.tag(forms) == tagger.compacted().tag(forms)
    # one UPOS per class: no companion
    assert not wants_upos([[(w[0], w[1], "_") for w in s] for s in tiny_tuples])
