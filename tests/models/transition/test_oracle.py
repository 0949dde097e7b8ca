"""The static oracle rebuilds every gold tree exactly, non-projective ones included,
and only ever asks for moves the system allows."""
import numpy as np
import pytest

from models.conllu import read_conllu
from models.transition.oracle import oracle_move, oracle_sequence, rebuilds
from models.transition.system import (
    LABELED,
    apply,
    is_terminal,
    label_valid,
    new_state,
    type_valid,
)
from models.tree import is_projective


def _gold(sent, lab_id):
    gh = sent.heads()
    gl = np.array([-1] + [lab_id.setdefault(d, len(lab_id)) for d in sent.deprels()[1:]])
    return gh, gl


def test_literal_non_projective_tree():
    # 1 <- 3, 2 -> 4 crosses 3 -> ... : heads = [-1, 3, 0, 2, 2] with arcs (3,1) and (2,4)
    gh = np.array([-1, 3, 0, 2, 2, 1])
    gl = np.array([-1, 1, 0, 2, 2, 3])
    assert not is_projective(gh)
    assert rebuilds(gh, gl)


def test_oracle_moves_are_valid(rng):
    root = 0
    for _ in range(200):
        n = int(rng.integers(1, 10))
        # random tree: attach words in a random order to already attached nodes
        order = rng.permutation(np.arange(1, n + 1))
        gh = np.full(n + 1, -1)
        attached = [0]
        for w in order:
            h = 0 if len(attached) == 1 else int(rng.choice(attached[1:]))
            gh[w] = h
            attached.append(int(w))
        gl = np.where(gh == 0, root, 1)
        gl[0] = -1
        st, sc = new_state(n)
        while not is_terminal(sc):
            t, lab = oracle_move(st, sc, gh, gl)
            assert type_valid(st, sc, t)
            if LABELED[t]:
                assert label_valid(st, sc, t, lab, root)
            apply(st, sc, t, lab)
        assert np.array_equal(st[0, 1:], gh[1:]) and np.array_equal(st[1, 1:], gl[1:])


@pytest.mark.parametrize("treebank", ["en_ewt/train.conllu", "nl_lassysmall/train.conllu"])
def test_oracle_rebuilds_every_training_tree(treebank, data_dir):
    path = data_dir / treebank
    if not path.exists():
        pytest.skip(f"{path} not present")
    lab_id: dict[str, int] = {}
    failed, total, nonproj = [], 0, 0
    for s in read_conllu(str(path)):
        gh, gl = _gold(s, lab_id)
        total += 1
        nonproj += not is_projective(gh)
        if not rebuilds(gh, gl):
            failed.append(s.start_line)
    assert total > 1000 and nonproj > 0
    assert failed == [], f"{len(failed)} of {total} trees not rebuilt (lines {failed[:10]})"


def test_transitions_per_word_are_linear_in_practice(data_dir):
    path = data_dir / "en_ewt" / "train.conllu"
    if not path.exists():
        pytest.skip("en_ewt not present")
    lab_id: dict[str, int] = {}
    words = moves = 0
    for k, s in enumerate(read_conllu(str(path))):
        if k == 500:
            break
        gh, gl = _gold(s, lab_id)
        moves += len(oracle_sequence(gh, gl)[0])
        words += len(gh) - 1
    assert 1.0 <= moves / words < 3.0
