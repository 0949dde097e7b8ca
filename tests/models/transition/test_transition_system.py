"""The hybrid system's transitions, preconditions and finalisation (literal fixtures and
a property test over random legal sequences)."""
import numpy as np

from models.transition.system import (
    DELTA,
    HEAD,
    LABEL,
    LEFT_PASS,
    LEFT_REDUCE,
    N_TYPES,
    ND,
    NO_PASS,
    NO_REDUCE,
    NO_SHIFT,
    NS,
    RIGHT_PASS,
    RIGHT_SHIFT,
    SIGMA,
    J,
    action_name,
    action_table,
    apply,
    finalize,
    is_terminal,
    label_valid,
    new_state,
    top,
    type_valid,
    valid_mask,
)
from models.tree import find_cycle, is_valid_tree, root_children

ROOT, DEP, OBJ = 0, 1, 2          # label ids of the fixtures


def stack(st, sc):
    return [int(x) for x in st[SIGMA, :sc[NS]]]


def deque(st, sc):
    """lambda2 front first."""
    return [int(x) for x in st[DELTA, :sc[ND]][::-1]]


def test_initial_state():
    st, sc = new_state(3)
    assert stack(st, sc) == [0] and deque(st, sc) == [] and sc[J] == 1
    assert list(st[HEAD]) == [-1, -1, -1, -1]
    assert not is_terminal(sc)


def test_each_transition_moves_words_and_arcs():
    st, sc = new_state(4)
    apply(st, sc, NO_SHIFT, -1)                 # [0 1] [] 2
    assert stack(st, sc) == [0, 1] and sc[J] == 2
    apply(st, sc, LEFT_REDUCE, DEP)             # 1 <- 2
    assert stack(st, sc) == [0] and st[HEAD, 1] == 2 and st[LABEL, 1] == DEP
    apply(st, sc, RIGHT_SHIFT, ROOT)            # 0 -> 2, shift
    assert stack(st, sc) == [0, 2] and sc[J] == 3 and st[HEAD, 2] == 0
    apply(st, sc, NO_PASS, -1)                  # [0] [2] 3
    assert stack(st, sc) == [0] and deque(st, sc) == [2]
    apply(st, sc, NO_PASS, -1)                  # [] [0 2] 3
    assert stack(st, sc) == [] and deque(st, sc) == [0, 2]
    apply(st, sc, NO_SHIFT, -1)                 # lambda1 | lambda2 | j
    assert stack(st, sc) == [0, 2, 3] and deque(st, sc) == [] and sc[J] == 4
    apply(st, sc, LEFT_PASS, OBJ)               # 3 <- 4, pass 3
    assert st[HEAD, 3] == 4 and deque(st, sc) == [3]
    apply(st, sc, RIGHT_PASS, OBJ)              # 2 -> 4, pass 2
    assert st[HEAD, 4] == 2 and deque(st, sc) == [2, 3]
    apply(st, sc, NO_SHIFT, -1)
    assert is_terminal(sc) and stack(st, sc) == [0, 2, 3, 4]
    assert list(st[HEAD]) == [-1, 2, 0, 4, 2]


def test_no_reduce_pops_a_word_with_a_head():
    st, sc = new_state(3)
    apply(st, sc, RIGHT_SHIFT, ROOT)            # 0 -> 1
    assert type_valid(st, sc, NO_REDUCE)
    apply(st, sc, NO_REDUCE, -1)
    assert stack(st, sc) == [0]


def test_preconditions():
    st, sc = new_state(3)
    # i = 0: no left arc to the root, no reduce of the root
    assert not type_valid(st, sc, LEFT_REDUCE) and not type_valid(st, sc, LEFT_PASS)
    assert not type_valid(st, sc, NO_REDUCE)
    assert type_valid(st, sc, RIGHT_SHIFT) and type_valid(st, sc, NO_SHIFT)
    # the arc from the root carries the root label and only it
    assert label_valid(st, sc, RIGHT_SHIFT, ROOT, ROOT)
    assert not label_valid(st, sc, RIGHT_SHIFT, DEP, ROOT)
    apply(st, sc, RIGHT_SHIFT, ROOT)            # 0 -> 1, lambda1 [0 1], j = 2
    assert not label_valid(st, sc, RIGHT_SHIFT, ROOT, ROOT)
    assert not label_valid(st, sc, LEFT_REDUCE, ROOT, ROOT)
    # i = 1 has a head: no second head, but it can be reduced
    assert not type_valid(st, sc, LEFT_REDUCE) and type_valid(st, sc, NO_REDUCE)
    apply(st, sc, RIGHT_PASS, DEP)              # 1 -> 2; lambda1 [0], j = 2
    # j = 2 has a head now: no right arc; and the root already has its dependent
    assert not type_valid(st, sc, RIGHT_SHIFT) and not type_valid(st, sc, RIGHT_PASS)


def test_no_cycles_left_or_right():
    st, sc = new_state(3)
    apply(st, sc, NO_SHIFT, -1)                 # [0 1] [] 2
    apply(st, sc, LEFT_PASS, DEP)               # 1 <- 2; [0] [1] 2
    apply(st, sc, NO_SHIFT, -1)                 # [0 1 2] 3
    apply(st, sc, LEFT_PASS, DEP)               # 2 <- 3; [0 1] [2] 3
    # i = 1 has a head (2); j = 3 is an ancestor of 1: RIGHT 1 -> 3 would be a cycle
    assert st[HEAD, 1] == 2 and st[HEAD, 2] == 3
    assert not type_valid(st, sc, RIGHT_SHIFT) and not type_valid(st, sc, RIGHT_PASS)


def test_empty_stack_only_shifts():
    st, sc = new_state(2)
    apply(st, sc, NO_PASS, -1)
    assert top(st, sc) == -1
    assert [bool(type_valid(st, sc, t)) for t in range(N_TYPES)] == [
        False, False, True, False, False, False, False]


def test_finalize_makes_one_root_word():
    st, sc = new_state(4)
    while not is_terminal(sc):
        apply(st, sc, NO_SHIFT, -1)
    assert finalize(st, ROOT, DEP) == 4
    heads = st[HEAD]
    assert is_valid_tree(heads) and root_children(heads) == [1]
    assert list(st[LABEL, 1:]) == [ROOT, DEP, DEP, DEP]


def _random_run(rng, n, atype, alabel):
    st, sc = new_state(n)
    valid = np.zeros(len(atype), np.bool_)
    steps = 0
    while not is_terminal(sc):
        assert valid_mask(st, sc, atype, alabel, ROOT, valid) > 0
        a = rng.choice(np.flatnonzero(valid))
        apply(st, sc, atype[a], alabel[a])
        steps += 1
        heads = st[HEAD].copy()
        assert find_cycle(np.where(heads < 0, -1, heads)) is None   # always a forest
        assert len(root_children(heads)) <= 1
        assert all(st[LABEL, d] == ROOT for d in root_children(heads))
    assert steps <= 4 * n * n
    return st


def test_random_legal_sequences_give_trees(rng):
    atype, alabel = action_table(["root", "dep", "obj"])
    for _ in range(300):
        n = int(rng.integers(1, 12))
        st = _random_run(rng, n, atype, alabel)
        finalize(st, ROOT, DEP)
        heads = st[HEAD]
        assert is_valid_tree(heads), heads
        assert len(root_children(heads)) == 1
        roots = root_children(heads)
        assert all((st[LABEL, d] == ROOT) == (d in roots) for d in range(1, n + 1))


def test_action_table_and_names():
    atype, alabel = action_table(["root", "dep"], {(RIGHT_SHIFT, "root"), (LEFT_REDUCE, "dep")})
    assert list(atype) == [NO_SHIFT, NO_REDUCE, NO_PASS, LEFT_REDUCE, RIGHT_SHIFT]
    assert list(alabel) == [-1, -1, -1, 1, 0]
    assert action_name(LEFT_PASS, "nsubj") == "LEFT_nsubj-PASS"
    assert action_name(NO_SHIFT, None) == "NO-SHIFT"
