"""Feature templates and extraction; the logistic-regression classifier and AdaGrad."""
import numpy as np
import pytest

from models.graph.encode import encode
from models.transition.classifier import adagrad_epoch, bit, pack_bits, probabilities
from models.transition.examples import valid_moves
from models.transition.features import DEFAULT_TEMPLATES, N_POS, extract, parse_templates
from models.transition.system import NO_SHIFT, RIGHT_SHIFT, apply, new_state


def _enc():
    return encode(["The", "dog", "barks", "."], None, ["DET", "NOUN", "VERB", "PUNCT"],
                  ["DT", "NN", "VBZ", "."])


def test_parse_templates():
    t = parse_templates(["s0.w b0.p", "dist", "b0l2.l s0.sr ns"])
    assert t.shape == (3, 3, 2)
    assert list(t[0, 2]) == [-1, -1]
    for bad in (["s9.w"], ["s0.zz"], [""], ["s0.w s0.p s0.m s0.x"]):
        with pytest.raises(ValueError):
            parse_templates(bad)


def _rows(st, sc, attrs, table, n_rows=1 << 16):
    out = np.zeros(table.shape[0], np.int64)
    extract(st, sc, attrs, table, n_rows, np.zeros(N_POS, np.int64), out)
    return out


def test_extract_is_deterministic_in_range_and_state_dependent():
    table = parse_templates(DEFAULT_TEMPLATES)
    attrs = _enc().attrs
    st, sc = new_state(4)
    r1 = _rows(st, sc, attrs, table)
    assert ((r1 >= 0) & (r1 < 1 << 16)).all()
    assert np.array_equal(r1, _rows(st, sc, attrs, table))
    apply(st, sc, NO_SHIFT, -1)
    r2 = _rows(st, sc, attrs, table)
    assert (r1 != r2).sum() > len(DEFAULT_TEMPLATES) // 2
    # an arc changes the structural features (labels, valency) of the words involved
    st2, sc2 = st.copy(), sc.copy()
    apply(st2, sc2, RIGHT_SHIFT, 3)
    st3, sc3 = st.copy(), sc.copy()
    apply(st3, sc3, NO_SHIFT, -1)
    assert not np.array_equal(_rows(st2, sc2, attrs, table), _rows(st3, sc3, attrs, table))


def test_unseen_words_hash_to_other_rows():
    table = parse_templates(["b0.w"])
    st, sc = new_state(4)
    a = encode(["cat", "x", "y", "z"], None, ["NOUN"] * 4, ["NN"] * 4).attrs
    b = encode(["dog", "x", "y", "z"], None, ["NOUN"] * 4, ["NN"] * 4).attrs
    assert _rows(st, sc, a, table)[0] != _rows(st, sc, b, table)[0]


def test_probabilities_only_over_valid_actions():
    W = np.array([[1.0, 2.0, 3.0], [0.5, 0.0, -1.0]], dtype=np.float32)
    out = np.zeros(3)
    best = probabilities(W, np.array([0, 1]), np.array([True, True, False]), out)
    assert best == 1   # scores 1.5, 2.0, 2.0; action 2 is invalid
    assert out[2] == 0.0 and abs(out.sum() - 1.0) < 1e-12
    e = np.exp([1.5, 2.0])
    assert np.allclose(out[:2], e / e.sum())
    assert probabilities(W, np.array([0]), np.zeros(3, np.bool_), out) == -1


def test_adagrad_learns_a_separable_problem(rng):
    # 3 classes, the class is given by feature row 10+y; 5 noise rows per example
    N, A, R = 600, 3, 64
    y = rng.integers(0, A, N)
    X = np.concatenate([10 + y[:, None], rng.integers(20, R, (N, 5))], axis=1).astype(np.int32)
    V = np.packbits(np.ones((N, A), np.bool_), axis=1, bitorder="little")
    W = np.zeros((R, A), np.float32)
    G = np.zeros_like(W)
    p = np.zeros(A)
    order = np.arange(N, dtype=np.int64)
    loss1, _correct1 = adagrad_epoch(W, G, X, y, V, order, 0.1, 0.1, 1e-3, p)
    loss2, correct2 = adagrad_epoch(W, G, X, y, V, order, 0.1, 0.1, 1e-3, p)
    assert loss2 < loss1 / 2 and correct2 == N
    assert (W[10 + np.arange(A), np.arange(A)] > 0).all()


def test_valid_moves_packed_as_bits_round_trip(rng):
    """pack_bits writes numpy's little-endian packbits; bit and valid_moves read it back."""
    flags = rng.random((7, 111)) < 0.3
    V = np.zeros((7, 14), np.uint8)
    for e in range(7):
        pack_bits(flags[e], V[e])
    assert np.array_equal(V, np.packbits(flags, axis=1, bitorder="little"))
    assert np.array_equal(valid_moves(V, 111), flags)
    assert all(bit(V, e, a) == flags[e, a] for e in range(7) for a in range(111))
