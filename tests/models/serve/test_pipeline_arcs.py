"""The shipped pipeline's neural analyser scores: every decoder's budget field `neural`."""
from __future__ import annotations

import copy
import dataclasses

import pytest

from models.decoder_registry import GRAPH_DECODERS as DECODERS
from models.graph.decoders import BudgetError
from models.serve.parse_policy import SELECTIONAL_POWER
from models.serve.pipeline import NEURAL, SELECTIONAL, Pipeline

FORMS = "I saw the new Fiat Punto at the dealer 's yesterday .".split()


@pytest.fixture(scope="module")
def pipe():
    p = Pipeline.load("en_ewt")
    if p.analyser is None:
        pytest.skip("the shipped en_ewt has no neural analyser (models/pretrained/en_ewt/neural)")
    return p


def test_every_decoder_lists_the_field(pipe):
    decs = pipe.decoders()
    for name in [*DECODERS, SELECTIONAL]:
        assert NEURAL in decs[name]["fields"] and decs[name]["defaults"][NEURAL] is None
    assert "power" in decs[SELECTIONAL]["params"][NEURAL]["doc"]
    assert "+n" in pipe.version                   # answers depend on the analyser


def test_selectional_weighs_its_moves_by_the_analyser_and_takes_its_relations(pipe):
    """Unset: SELECTIONAL_POWER with the accurate tagger, off with the fast one; on, the
    relations are the analyser's (so `root` only under the root), off the transition
    model's own."""
    acc = pipe.parse_words(FORMS, SELECTIONAL, {}, tagger="accurate")
    assert acc.stats[NEURAL] == SELECTIONAL_POWER and acc.stats["neural_seconds"] >= 0
    assert all(t.deprel in pipe.analyser.labels for t in acc.tokens)
    assert [t.deprel == "root" for t in acc.tokens] == [t.head == 0 for t in acc.tokens]
    assert pipe.parse_words(FORMS, SELECTIONAL, {}, tagger="fast").stats[NEURAL] == 0.0
    off = pipe.parse_words(FORMS, SELECTIONAL, {NEURAL: 0}, tagger="accurate")
    assert off.stats[NEURAL] == 0.0 and "neural_seconds" not in off.stats
    strong = pipe.parse_words(FORMS, SELECTIONAL, {NEURAL: 10}, tagger="accurate")
    graph = pipe.parse_words(FORMS, "mst", {NEURAL: 10}, tagger="accurate")
    same = sum(x.head == y.head for x, y in zip(strong.tokens, graph.tokens))
    assert strong.stats[NEURAL] == 10.0 and same >= len(FORMS) - 2
    for bad in (-0.1, 10.5, "high"):
        with pytest.raises(BudgetError, match="neural must be a number in"):
            pipe.parse_words(FORMS, SELECTIONAL, {NEURAL: bad})


def test_unset_means_the_models_weight_with_the_accurate_tagger_only(pipe):
    assert pipe.parse_words(FORMS, "mst", {}, tagger="fast").stats[NEURAL] == 0.0
    acc = pipe.parse_words(FORMS, "mst", {}, tagger="accurate")
    assert acc.stats[NEURAL] == pipe.arc_weight > 0 and acc.stats["neural_seconds"] >= 0
    assert pipe.parse_words(FORMS, "mst", {NEURAL: 0}, tagger="accurate").stats[NEURAL] == 0.0
    given = pipe.parse_words(FORMS, "mst", {}, upos=["X"] * len(FORMS), xpos=["X"] * len(FORMS))
    assert given.stats[NEURAL] == 0.0             # tags given: no tagger, so off unless asked


def test_a_large_weight_follows_the_analyser_and_every_decoder_takes_it(pipe):
    """At weight 10 the tag-free analyser decides: its trees hardly depend on the tags."""
    fake = {"upos": ["NOUN"] * len(FORMS), "xpos": ["NN"] * len(FORMS)}
    real = pipe.tag(FORMS)
    for dec in DECODERS:
        a = pipe.parse_words(FORMS, dec, {NEURAL: 10}, upos=real[0], xpos=real[1])
        b = pipe.parse_words(FORMS, dec, {NEURAL: 10}, **fake)
        assert a.stats[NEURAL] == 10.0
        same = sum(x.head == y.head for x, y in zip(a.tokens, b.tokens))
        assert same >= len(FORMS) - 2, dec
    again = pipe.parse_words(FORMS, "greedy", {NEURAL: 0.5}, tagger="accurate")
    assert [t.head for t in again.tokens] == [
        t.head for t in pipe.parse_words(FORMS, "greedy", {NEURAL: 0.5}, tagger="accurate").tokens]


def test_relations_come_from_the_analyser_when_it_ran(pipe):
    """With the analyser's scores on, each relation is its classifier's choice for the
    tree's arc (plus the calibrated share of the graph labeler's), so a word attached to
    the root, and only such a word, is `root`."""
    tree = pipe.parse_words(FORMS, "greedy", {}, tagger="accurate")
    roots = [t for t in tree.tokens if t.head == 0]
    assert len(roots) == 1 and roots[0].deprel == "root"
    assert all(t.deprel != "root" for t in tree.tokens if t.head != 0)
    assert all(t.deprel in pipe.analyser.labels for t in tree.tokens)


def test_bad_weights_are_budget_errors(pipe):
    for bad in (-0.1, 10.5, "high", True, [1]):
        with pytest.raises(BudgetError, match="neural must be a number in"):
            pipe.parse_words(FORMS, "mst", {NEURAL: bad})


def test_a_model_without_analyser_refuses_a_weight_and_lists_no_field(pipe):
    plain = copy.copy(pipe)        # neither analyser: nor the contextual one
    plain.c = dataclasses.replace(pipe.c, analyser=None, accurate=None, contextual=None)
    plain.tagging = type(pipe.tagging)(plain.c)
    assert all(NEURAL not in d["fields"] for d in plain.decoders().values())
    assert plain.parse_words(FORMS, "mst", {NEURAL: 0}).stats[NEURAL] == 0
    assert plain.parse_words(FORMS, "mst", {}).stats[NEURAL] == 0
    with pytest.raises(BudgetError, match="no neural analyser"):
        plain.parse_words(FORMS, "mst", {NEURAL: 0.5})
