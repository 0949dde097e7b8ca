"""UD's one subject and one object a head: the exact choice under the limits, and the
shipped model's relations keeping them on both taggers' paths."""
from __future__ import annotations

import itertools
from collections import Counter
from itertools import islice
from pathlib import Path

import numpy as np
import pytest

from models.relation_rules import best_relations, breaks_limits, rule_masks

LABELS = ("nsubj", "obj", "iobj", "obl", "nsubj:pass", "csubj", "nsubj:outer", "obj:agent")
EWT_DEV = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "en_ewt" / "dev.conllu"


def test_masks_follow_the_validator():
    subj, obj = rule_masks(LABELS)
    assert [lab for lab, s in zip(LABELS, subj) if s] == ["nsubj", "nsubj:pass", "csubj"]
    assert [lab for lab, o in zip(LABELS, obj) if o] == ["obj", "obj:agent"]


def test_two_objects_keep_the_one_that_loses_most_without_it():
    labels = ("obj", "iobj", "obl")
    subj, obj = rule_masks(labels)
    scores = np.log(np.array([[0.6, 0.35, 0.05],      # "him": obj, iobj close behind
                              [0.9, 0.02, 0.08]]))    # "the book": clearly obj
    best = best_relations(scores, [2, 2], subj, obj)
    assert [labels[b] for b in best] == ["iobj", "obj"]
    assert breaks_limits(scores.argmax(1), [2, 2], subj, obj)
    assert not breaks_limits(best, [2, 2], subj, obj)


def test_heads_within_the_limits_keep_their_argmax():
    subj, obj = rule_masks(LABELS)
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(4, len(LABELS)))
    scores[:, 0] += [5, 0, 0, 0]
    scores[:, 1] += [0, 5, 0, 5]                      # two objects, of different heads
    scores[:, 3] += [0, 0, 5, 0]                      # and an obl
    heads = [2, 0, 2, 2]
    assert best_relations(scores, heads, subj, obj).tolist() == scores.argmax(1).tolist()


@pytest.mark.parametrize("seed", range(30))
def test_the_choice_is_the_best_assignment_within_the_limits(seed):
    labels = ("nsubj", "obj", "obl", "csubj")
    subj, obj = rule_masks(labels)
    rng = np.random.default_rng(seed)
    heads = rng.integers(0, 3, size=5)
    scores = rng.normal(size=(5, len(labels)))
    scores[:, :2] += 1.5                              # subjects and objects are likely
    best = best_relations(scores, heads, subj, obj)
    assert not breaks_limits(best, heads, subj, obj)
    top = max(scores[np.arange(5), list(a)].sum()
              for a in itertools.product(range(len(labels)), repeat=5)
              if not breaks_limits(np.array(a), heads, subj, obj))
    assert scores[np.arange(5), best].sum() == pytest.approx(top)


def _broken(tokens) -> int:
    index = {lab: i for i, lab in enumerate(sorted({t.deprel for t in tokens}))}
    subj, obj = rule_masks(tuple(sorted(index)))
    ids = np.array([index[t.deprel] for t in tokens])
    return int(breaks_limits(ids, [t.head for t in tokens], subj, obj))


@pytest.mark.parametrize("tagger", ["fast", "accurate"])
def test_the_shipped_model_keeps_one_subject_and_one_object_a_head(tagger):
    if not EWT_DEV.exists():
        pytest.skip(f"no EWT dev data at {EWT_DEV}")
    from models.conllu import read_conllu
    from models.serve.pipeline import Pipeline

    pipe = Pipeline.load("en_ewt")
    sents = list(islice(read_conllu(str(EWT_DEV)), 300))
    broken = Counter()
    for s in sents:
        tree = pipe.parse_words([w.form for w in s.words], "greedy", {}, tagger=tagger)
        broken[_broken(tree.tokens)] += 1
    assert broken[1] == 0 and broken[0] == len(sents)
