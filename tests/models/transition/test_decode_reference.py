"""Slow reference for selectional branching: the paper's procedure written out in plain
Python over the system's single steps, compared with the numba decoder."""
from itertools import islice

import numpy as np
import pytest

from models.conllu import read_conllu
from models.transition.classifier import probabilities
from models.transition.features import N_POS, extract
from models.transition.system import apply, finalize, is_terminal, new_state, valid_mask
from models.transition.train import _encode, train


def reference_parse(model, attrs, beam, margin):
    A = len(model.atype)
    W = model.dense_weights()
    rows, pos = np.zeros(model.table.shape[0], np.int64), np.zeros(N_POS, np.int64)

    def step(st, sc):
        valid, probs = np.zeros(A, np.bool_), np.zeros(A)
        extract(st, sc, attrs, model.table, model.n_rows, pos, rows)
        valid_mask(st, sc, model.atype, model.alabel, model.root_label, valid)
        best = probabilities(W, rows, valid, probs)
        return best, probs, valid

    def greedy(st, sc, total, count, low=None):
        while not is_terminal(sc):
            best, probs, valid = step(st, sc)
            if low is not None:
                alts = [(probs[a], a) for a in range(A) if valid[a] and a != best]
                if alts:
                    ps, second = max(alts)
                    if probs[best] - ps <= margin:
                        low.append((ps, st.copy(), sc.copy(), second, total, count))
            apply(st, sc, model.atype[best], model.alabel[best])
            total, count = total + probs[best], count + 1
        return total / count

    n = attrs.shape[0] - 1
    st, sc = new_state(n)
    low = []
    best_st, best_avg = st, greedy(st, sc, 0.0, 0, low)
    low.sort(key=lambda x: -x[0])
    for ps, bst, bsc, alt, total, count in low[:beam - 1]:
        apply(bst, bsc, model.atype[alt], model.alabel[alt])
        avg = greedy(bst, bsc, total + ps, count + 1)
        if avg > best_avg:
            best_st, best_avg = bst, avg
    finalize(best_st, model.root_label, model.fallback_label)
    return best_st[0], best_st[1], best_avg


@pytest.fixture(scope="module")
def small(data_dir):
    path = data_dir / "en_ewt" / "train.conllu"
    if not path.exists():
        pytest.skip("en_ewt not present")
    sents = list(islice(read_conllu(str(path)), 230))
    model = train(sents[:200], None, None, epochs=1, n_rows=1 << 14, alpha=0.05)
    return model, [_encode(s) for s in sents[200:]]


@pytest.mark.parametrize("beam,margin", [(1, 0.88), (4, 0.88), (16, 0.5), (64, 1.0)])
def test_numba_decoder_matches_reference(small, beam, margin):
    model, attrs = small
    for a in attrs:
        h, labels, score, _ = model.parse_encoded(a, beam, margin)
        rh, rl, rscore = reference_parse(model, a, beam, margin)
        assert np.array_equal(h, rh) and np.array_equal(labels, rl)
        assert score == pytest.approx(rscore, abs=1e-9)
