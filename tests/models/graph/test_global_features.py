"""Global features (Zhang et al. 2014): each on a hand-built tree, the incremental
score of every hill-climbing move against the whole tree's, and the search and
training that use them."""
from pathlib import Path

import numpy as np
import pytest
from graph_fixtures import train_tiny_graph

from models.graph.decode_greedy import greedy_search
from models.graph.decoders.base import Scorer
from models.graph.encode import A_UPOS, A_WORD, encode
from models.graph.features import OUTSIDE, fhash
from models.graph.global_features import (
    MAX_WORD_TERMS,
    global_feature_ids,
    global_score,
    move_delta,
    right_branch_terms,
    scores_into,
    size_bin,
    subtree_stats,
    word_terms,
)
from models.graph.model import GraphModel
from models.graph.prune import all_arcs
from models.graph.rng import new_state
from models.graph.scoring import arc_scores, new_memo
from models.graph.search_space import build_search_space
from models.tree import is_valid_tree

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "en_ewt"
Z = np.uint64(0)

# "She saw the man with a telescope and a dog ." (1-based heads; "with" is the case of
# "telescope", which hangs on "saw": a PP attachment; "and" is the cc of "dog", the
# conjunct of "telescope")
FORMS = "She saw the man with a telescope and a dog .".split()
UPOS = "PRON VERB DET NOUN ADP DET NOUN CCONJ DET NOUN PUNCT".split()
HEADS = [-1, 2, 0, 4, 2, 7, 7, 2, 10, 10, 7, 2]


def _enc():
    return encode(FORMS, None, UPOS, UPOS)


def _terms(x, heads, enc):
    n1 = len(heads)
    lo, hi, size = (np.empty(n1, np.int64) for _ in range(3))
    subtree_stats(np.array(heads, np.int64), lo, hi, size)
    buf = np.empty(MAX_WORD_TERMS, np.uint64)
    k = word_terms(x, np.array(heads, np.int64), lo, hi, size, enc.attrs, buf)
    return set(buf[:k].tolist()), lo, hi, size


def test_subtree_extents_and_sizes_on_a_hand_built_tree():
    _, lo, hi, size = _terms(1, HEADS, _enc())
    assert (lo[2], hi[2], size[2]) == (1, 11, 11)          # saw: the whole sentence
    assert (lo[7], hi[7], size[7]) == (5, 10, 6)           # telescope: with .. dog
    assert (lo[10], hi[10], size[10]) == (8, 10, 3)        # dog: and a dog
    assert (lo[4], hi[4], size[4]) == (3, 4, 2) and size[0] == 12


def test_span_length_valency_and_neighbour_terms():
    enc = _enc()
    t, lo, hi, size = _terms(7, HEADS, enc)
    P, HP = enc.attrs[7, A_UPOS], enc.attrs[2, A_UPOS]
    assert fhash(300, P, np.uint64(size_bin(6)), Z, Z, Z) in t        # span of 6 words
    assert fhash(301, P, HP, np.uint64(size_bin(6)), Z, Z) in t
    assert fhash(302, P, np.uint64(2), np.uint64(3), Z, Z) in t       # 2 left, 3 right
    left, right = enc.attrs[4, A_UPOS], enc.attrs[11, A_UPOS]          # "man", "."
    assert fhash(303, P, np.uint64(size_bin(6)), left, right, Z) in t
    assert fhash(304, P, np.uint64(3), Z, Z, Z) in t                  # with, a, dog
    t2, *_ = _terms(2, HEADS, enc)                                    # saw: She man tel. .
    assert fhash(304, enc.attrs[2, A_UPOS], np.uint64(3), Z, Z, Z) in t2   # "." not counted
    t1, *_ = _terms(1, HEADS, enc)                                    # She: first word
    assert fhash(303, enc.attrs[1, A_UPOS], np.uint64(1), enc.attrs[0, A_UPOS],
                 enc.attrs[2, A_UPOS], Z) in t1                       # the root's row left
    t11, *_ = _terms(11, HEADS, enc)
    assert fhash(303, enc.attrs[11, A_UPOS], np.uint64(1), enc.attrs[10, A_UPOS], OUTSIDE,
                 Z) in t11


def test_the_non_projective_flag_is_a_subtree_with_a_gap():
    enc = _enc()
    gap = fhash(306, Z, Z, Z, Z, Z)
    for x in range(1, len(HEADS)):                        # the tree is projective
        assert gap not in _terms(x, HEADS, enc)[0]
    crossing = list(HEADS)
    crossing[3] = 7              # "the" under "telescope": "man" now sits inside its span
    t7, lo, hi, size = _terms(7, crossing, enc)
    assert (lo[7], hi[7], size[7]) == (3, 10, 7) and gap in t7
    assert fhash(307, enc.attrs[7, A_UPOS], enc.attrs[2, A_UPOS], Z, Z, Z) in t7
    assert gap not in _terms(10, crossing, enc)[0]


def test_coordination_and_pp_attachment_terms():
    enc = _enc()
    t10, *_ = _terms(10, HEADS, enc)                      # dog has the cc child "and"
    P, HP = enc.attrs[10, A_UPOS], enc.attrs[7, A_UPOS]
    assert fhash(308, P, HP, Z, Z, Z) in t10 and fhash(312, np.uint64(1), Z, Z, Z, Z) in t10
    assert fhash(308, enc.attrs[7, A_UPOS], enc.attrs[2, A_UPOS], Z, Z, Z) not in \
        _terms(7, HEADS, enc)[0]
    t7, *_ = _terms(7, HEADS, enc)                        # telescope has the ADP "with"
    w = enc.attrs[:, A_WORD]
    assert fhash(310, w[2], w[5], enc.attrs[7, A_UPOS], Z, Z) in t7      # saw, with, NOUN
    assert fhash(311, enc.attrs[2, A_UPOS], w[5], w[7], Z, Z) in t7      # VERB, with, telescope


def test_the_right_branch_counts_the_path_to_the_last_word_before_punctuation():
    enc = _enc()
    buf = np.empty(MAX_WORD_TERMS, np.uint64)
    right_branch_terms(np.array(HEADS, np.int64), enc.attrs, buf)
    assert buf[0] == fhash(320, np.uint64(3), np.uint64(size_bin(11)), Z, Z, Z)  # dog tel. saw
    assert buf[1] == fhash(321, np.uint64(30 // 11), Z, Z, Z, Z)
    flat = [-1, 2, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2]          # every word under "saw"
    right_branch_terms(np.array(flat, np.int64), enc.attrs, buf)
    assert buf[0] == fhash(320, np.uint64(2), np.uint64(size_bin(11)), Z, Z, Z)


def _trees(n, rng, count):
    """Random valid trees of n words with one word under the root."""
    out = []
    while len(out) < count:
        h = [-1] + [int(rng.integers(0, n + 1)) for _ in range(n)]
        if all(h[i] != i for i in range(1, n + 1)) and is_valid_tree(h) \
                and h[1:].count(0) == 1:
            out.append(np.array(h, np.int64))
    return out


def _descends(heads, x, m):
    while x > 0:
        if x == m:
            return True
        x = heads[x]
    return False


@pytest.mark.parametrize("n", [3, 4, 5, 7])
def test_every_moves_incremental_global_score_equals_the_new_trees(n, rng):
    forms = FORMS[:n]
    enc = encode(forms, None, UPOS[:n], UPOS[:n])
    w = rng.standard_normal(1 << 14).astype(np.float32)
    mask = np.uint64((1 << 14) - 1)
    n1 = n + 1
    lo, hi, size = (np.empty(n1, np.int64) for _ in range(3))
    G = np.zeros(n1)
    mark = np.zeros(n1, np.bool_)
    buf = np.empty(MAX_WORD_TERMS, np.uint64)
    moves = 0
    for heads in _trees(n, rng, 40):
        total = scores_into(heads, enc.attrs, w, mask, lo, hi, size, G, buf)
        assert total == pytest.approx(global_score(heads, enc.attrs, w, mask))
        for m in range(1, n1):
            if heads[m] == 0:
                continue
            for b in range(1, n1):
                if b == heads[m] or _descends(heads, b, m):
                    continue
                before = heads.copy()
                d = move_delta(heads, m, b, enc.attrs, w, mask, lo, hi, size, G, mark, buf)
                assert np.array_equal(heads, before) and not mark.any()
                moved = heads.copy()
                moved[m] = b
                whole = global_score(moved, enc.attrs, w, mask) - total
                assert d == pytest.approx(whole, abs=1e-9)
                moves += 1
    assert moves >= 40


def test_greedy_search_scores_its_trees_with_the_global_features(rng):
    enc = _enc()
    n1 = len(HEADS)
    w = (0.5 * rng.standard_normal(1 << 16)).astype(np.float32)
    mask = (1 << 16) - 1
    allowed = all_arcs(n1 - 1)
    S = arc_scores(enc.attrs, enc.upos_prefix, w, np.uint64(mask), allowed)
    space = build_search_space(allowed, S, "first_order")
    trees = {}
    for on in (False, True):
        res = greedy_search(space.cand, space.ncand, space.cdf, space.root_cdf,
                            space.root_ok, 3, S, enc.attrs, enc.upos_prefix, w, mask,
                            new_memo(n1 - 1), seed_state=new_state(0), restarts=30,
                            converge=10, global_features=on)
        sc = Scorer(3, S, allowed, enc.attrs, enc.upos_prefix, w, mask, global_features=on)
        assert res.score == pytest.approx(sc.score(res.heads))
        trees[on] = res.heads
    assert global_feature_ids(trees[True], enc.attrs, mask).shape[0] > 4 * (n1 - 1)


@pytest.mark.skipif(not (DATA / "train.conllu").exists(), reason=f"no treebank at {DATA}")
def test_a_model_with_global_features_trains_saves_and_parses(tmp_path):
    m = GraphModel.load(train_tiny_graph(tmp_path, DATA / "train.conllu", "--global-features"))
    assert m.global_features and m.meta["global_features"] == "global-v1"
    res = m.parse(FORMS, UPOS, UPOS, decoder="greedy")
    sc = m.scorer(m.encode(FORMS, None, UPOS, UPOS))
    assert sc.global_features
    assert res.score == pytest.approx(sc.score(np.array([-1] + res.heads)))
