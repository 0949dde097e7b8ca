"""Compact weights of a loaded transition model (row map + dense rows + packed
(action, float16 value) pairs) decode exactly as the dense table, and hold far less memory."""
from itertools import islice
from pathlib import Path

import numpy as np
import pytest

from models.transition.classifier import (
    compact,
    compact_probabilities,
    flat_weights,
    identity_weights,
    probabilities,
)
from models.transition.model import TransitionModel

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = ROOT / "models" / "pretrained" / "en_ewt" / "transition"


def _sparse_table(rng, n_rows=512, A=40):
    W = np.zeros((n_rows, A), np.float32)
    for r in range(n_rows):
        kind = r % 4  # all-zero, few non-zeros (pairs), many (dense), one
        k = {0: 0, 1: 3, 2: 30, 3: 1}[kind]
        cols = rng.choice(A, size=k, replace=False)
        W[r, cols] = rng.normal(size=k).astype(np.float16).astype(np.float32)
    return W


def test_compact_round_trip_and_bit_identical_probabilities(rng):
    W = _sparse_table(rng)
    flat = np.flatnonzero(W.ravel())
    gaps = np.diff(flat, prepend=0).astype(np.uint32)
    weights = compact(gaps, W.ravel()[flat].astype(np.float16), *W.shape)
    row_of, Wc, sp = weights
    assert (row_of == -1).sum() == W.shape[0] // 4
    assert Wc.shape[0] == W.shape[0] // 4          # only the 30-non-zero rows are dense
    assert sp.shape[0] == 6 * (W.shape[0] // 4)  # 3 + 1 pairs and 2 END per 4 rows
    f2, v2 = flat_weights(*weights)
    assert np.array_equal(f2, flat) and np.array_equal(v2, W.ravel()[flat])
    A = W.shape[1]
    for _ in range(200):
        rows = rng.integers(0, W.shape[0], size=12).astype(np.int64)
        valid = rng.random(A) < 0.7
        p_dense, p_comp, p_id = np.zeros(A), np.zeros(A), np.zeros(A)
        b1 = probabilities(W, rows, valid, p_dense)
        b2 = compact_probabilities(*weights, rows.copy(), valid, p_comp)
        b3 = compact_probabilities(*identity_weights(W), rows.copy(), valid, p_id)
        assert b1 == b2 == b3
        assert p_dense.tobytes() == p_comp.tobytes() == p_id.tobytes()


@pytest.fixture(scope="module")
def shipped():
    if not (SHIPPED / "model.json").exists():
        pytest.skip("shipped transition model not present")
    from models.transition import load
    return load(SHIPPED)


def test_loaded_model_is_small(shipped):
    assert shipped.W is None
    total = sum(a.nbytes for a in shipped.weights) + shipped.atype.nbytes + \
        shipped.alabel.nbytes + shipped.table.nbytes
    assert total < 80e6, total / 1e6
    assert shipped.nbytes() < 80e6


def test_loaded_model_saves_the_same_file(shipped, tmp_path):
    shipped.save(tmp_path)
    with np.load(SHIPPED / "weights.npz") as a, np.load(tmp_path / "weights.npz") as b:
        assert np.array_equal(a["gaps"], b["gaps"])
        assert a["value"].tobytes() == b["value"].tobytes()


def test_decode_bit_identical_to_dense(shipped, data_dir):
    path = data_dir / "en_ewt" / "dev.conllu"
    if not path.exists():
        pytest.skip("en_ewt dev not present")
    from models.conllu import read_conllu
    from models.transition.train import _encode

    dense = TransitionModel(shipped.labels, shipped.atype, shipped.alabel, shipped.templates,
                            shipped.dense_weights(), dict(shipped.meta))
    assert dense.W.shape == (shipped.n_rows, len(shipped.atype))
    sents = [_encode(s) for s in islice(read_conllu(str(path)), 300)]
    for beam in (1, 16):
        for attrs in sents:
            h1, l1, s1, st1 = shipped.parse_encoded(attrs, beam, 0.88)
            h2, l2, s2, st2 = dense.parse_encoded(attrs, beam, 0.88)
            assert np.array_equal(h1, h2) and np.array_equal(l1, l2)
            assert np.float64(s1).tobytes() == np.float64(s2).tobytes()
            assert st1 == st2
    # and every greedy step's probabilities equal the dense kernel's, byte for byte
    from models.transition.features import N_POS, extract
    from models.transition.system import apply, is_terminal, new_state, valid_mask

    A = len(shipped.atype)
    rows, pos = np.zeros(shipped.table.shape[0], np.int64), np.zeros(N_POS, np.int64)
    valid, p1, p2 = np.zeros(A, np.bool_), np.zeros(A), np.zeros(A)
    for attrs in sents[:50]:
        st, sc = new_state(attrs.shape[0] - 1)
        while not is_terminal(sc):
            extract(st, sc, attrs, shipped.table, shipped.n_rows, pos, rows)
            valid_mask(st, sc, shipped.atype, shipped.alabel, shipped.root_label, valid)
            b2 = probabilities(dense.W, rows, valid, p2)
            b1 = compact_probabilities(*shipped.weights, rows, valid, p1)
            assert b1 == b2 and p1.tobytes() == p2.tobytes()
            apply(st, sc, shipped.atype[b1], shipped.alabel[b1])
