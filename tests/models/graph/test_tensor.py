"""The tensor component (Lei et al. 2014): kernels against plain numpy, training, files."""
from pathlib import Path

import numpy as np
import pytest
from graph_fixtures import train_tiny_graph

from models.graph.encode import encode
from models.graph.model import GraphModel
from models.graph.prune import all_arcs
from models.graph.tensor import (
    N_ARC_ROWS,
    N_WORD_FEATURES,
    TensorArcs,
    arc_code,
    project,
    scatter_rows,
    tensor_gradients,
    word_rows,
)

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "en_ewt"

FORMS = "The cat , which I saw yesterday , sat on the old mat .".split()
UPOS = "DET NOUN PUNCT PRON PRON VERB ADV PUNCT VERB ADP DET ADJ NOUN PUNCT".split()


def _tensor(rng, rank=6, log2=10, missing=0.2):
    size = 1 << log2
    index = np.full(size, -1, dtype=np.int32)
    kept = np.flatnonzero(rng.random(size) > missing)
    index[kept] = np.arange(kept.shape[0], dtype=np.int32)
    U = rng.standard_normal((kept.shape[0], rank)).astype(np.float32)
    V = rng.standard_normal((kept.shape[0], rank)).astype(np.float32)
    W = rng.standard_normal((N_ARC_ROWS, rank)).astype(np.float32)
    return TensorArcs(index, U, V, W, 0.7)


def _reference(t: TensorArcs, rows: np.ndarray) -> np.ndarray:
    """T[h, m] by the formula, one arc at a time."""
    def proj(M, i):
        return sum((M[t.index[f]].astype(np.float64) for f in rows[i] if t.index[f] >= 0),
                   np.zeros(t.rank))
    n1 = rows.shape[0]
    T = np.zeros((n1, n1))
    for h in range(n1):
        for m in range(1, n1):
            if h != m:
                d = abs(m - h)
                k = d if d <= 5 else 6 if d <= 10 else 7 if d <= 20 else 8
                code = (16 if m > h else 0) + k + 1
                T[h, m] = np.sum(proj(t.U, h) * proj(t.V, m)
                                 * (t.W[0].astype(np.float64) + t.W[code]))
    return T


def test_word_rows_are_the_twelve_templates_masked():
    enc = encode(FORMS, None, UPOS, UPOS)
    rows = word_rows(enc.attrs, 1023)
    assert rows.shape == (len(FORMS) + 1, N_WORD_FEATURES)
    assert rows.min() >= 0 and rows.max() < 1024
    assert len(set(rows[:, 0])) == 1                 # the bias row is every word's
    assert rows[2, 1] != rows[3, 1]                  # different words, different rows
    assert rows[1, 1] == rows[11, 1]                 # "The" and "the" (lower-cased forms)


def test_tensor_scores_equal_a_numpy_reference(rng):
    enc = encode(FORMS, None, UPOS, UPOS)
    t = _tensor(rng)
    allowed = all_arcs(enc.n)
    allowed[3, 5] = False
    S = np.zeros((enc.n + 1, enc.n + 1))
    S[3, 5] = -np.inf
    t.add_scores(enc.attrs, allowed, S)
    ref = 0.7 * _reference(t, word_rows(enc.attrs, t.mask))
    ok = allowed.copy()
    np.testing.assert_allclose(S[ok], ref[ok], rtol=1e-5, atol=1e-6)
    assert S[3, 5] == -np.inf and np.all(S[:, 0] == 0) and np.all(np.diag(S) == 0)


def test_arc_code_is_the_direction_and_binned_distance():
    assert arc_code(3, 4) == 16 + 1 + 1 and arc_code(4, 3) == 1 + 1
    assert arc_code(0, 30) == 16 + 8 + 1 and arc_code(9, 1) == 6 + 1
    assert {arc_code(h, m) for h in range(40) for m in range(40) if h != m} <= set(range(1, 26))


def test_gradients_are_exact_for_the_tree_score_difference(rng):
    """T(gold) - T(pred) is linear in each of U, V, W: moving one by E changes it by
    exactly <gradient, E>."""
    enc = encode(FORMS, None, UPOS, UPOS)
    n1 = enc.n + 1
    gold = np.array([-1, 2, 9, 2, 6, 6, 2, 6, 2, 0, 9, 13, 13, 9, 9])
    pred = np.array([-1, 2, 9, 2, 6, 2, 9, 6, 2, 0, 13, 13, 13, 9, 6])
    rank = 5
    size = 1 << 9
    ident = np.arange(size, dtype=np.int32)
    U = rng.standard_normal((size, rank))
    V = rng.standard_normal((size, rank))
    W = rng.standard_normal((N_ARC_ROWS, rank))
    rows = word_rows(enc.attrs, size - 1)

    def diff(U, V, W):
        P, Q = project(rows, ident, U), project(rows, ident, V)
        return sum(np.sum(P[h[m]] * Q[m] * (W[0] + W[arc_code(h[m], m)])) * s
                   for h, s in ((gold, 1), (pred, -1)) for m in range(1, n1))

    P, Q = project(rows, ident, U), project(rows, ident, V)
    gP, gQ, gW = tensor_gradients(gold, pred, P, Q, W)
    base = diff(U, V, W)
    for which in range(3):
        E = [np.zeros_like(U), np.zeros_like(V), np.zeros_like(W)]
        E[which] = rng.standard_normal(E[which].shape)
        moved = diff(U + E[0], V + E[1], W + E[2])
        if which == 2:
            lin = np.sum(gW * E[2])
        else:
            r, g = scatter_rows(rows, (gP, gQ)[which])
            assert np.all(np.diff(r) > 0)                     # unique, sorted rows
            lin = np.sum(g * E[which][r])
        assert moved - base == pytest.approx(lin, rel=1e-9, abs=1e-9)


@pytest.mark.skipif(not (DATA / "train.conllu").exists(), reason=f"no treebank at {DATA}")
def test_a_tensor_model_trains_saves_and_loads_the_same_scores(tmp_path):
    m = GraphModel.load(train_tiny_graph(tmp_path, DATA / "train.conllu", "--tensor-rank", "8"))
    assert m.meta["tensor"] == {"rank": 8, "gamma": 0.3, "feature_set": "tensor-v1"}
    assert m.meta["train_config"]["tensor_rank"] == 8
    t = m.tensor
    assert t.U.shape == t.V.shape and t.U.shape[1] == 8 and 0 < t.U.shape[0] < t.index.shape[0]
    assert np.abs(t.U).sum() > 0 and np.isfinite(t.U).all()
    enc = m.encode(FORMS, None, UPOS, UPOS)
    with_tensor = m.scorer(enc).S
    plain = GraphModel(m.order, m.weights, m.labels, m.label_weights, pruner=m.pruner,
                       prune_threshold=m.prune_threshold, prune_max_heads=m.prune_max_heads,
                       prune_temperature=m.prune_temperature).scorer(enc).S
    ok = np.isfinite(plain)
    assert np.abs(with_tensor[ok] - plain[ok]).max() > 1e-4    # the tensor adds to arcs
    m.save_rel = 0.0            # the loaded weights are kept as they are (float16 already)
    m.save(tmp_path / "again")
    again = GraphModel.load(tmp_path / "again")
    np.testing.assert_array_equal(again.scorer(enc).S, with_tensor)
    res = again.parse(FORMS, UPOS, UPOS, decoder="greedy")
    assert len(res.heads) == len(FORMS)
