from __future__ import annotations

import pytest

from models.text.lemmatizer import Lemmatizer, apply_rule, edit_rule

TRAIN = [[
    ("studies", "NOUN", "NNS", "study"), ("flies", "VERB", "VBZ", "fly"),
    ("babies", "NOUN", "NNS", "baby"), ("cities", "NOUN", "NNS", "city"),
    ("walked", "VERB", "VBD", "walk"), ("talked", "VERB", "VBD", "talk"),
    ("went", "VERB", "VBD", "go"), ("The", "DET", "DT", "the"), ("is", "AUX", "VBZ", "be"),
    ("Smiths", "PROPN", "NNPS", "Smith"), ("cats", "NOUN", "NNS", "cat"),
    ("dogs", "NOUN", "NNS", "dog"), ("'s", "AUX", "VBZ", "be"), ("houses", "NOUN", "NNS", "house"),
    ("roses", "NOUN", "NNS", "rose"), ("pens", "NOUN", "NNS", "pen"), ("hats", "NOUN", "NNS", "hat"),
]]


@pytest.mark.parametrize("form, lemma", [
    ("studies", "study"), ("went", "go"), ("The", "the"), ("Running", "run"), ("ran", "run"),
    ("iPhone", "iPhone"), ("were", "be"),
])
def test_edit_rules_round_trip(form, lemma):
    assert apply_rule(form, edit_rule(form, lemma)) == lemma


def test_lexicon_rules_and_fallback():
    lem = Lemmatizer.train(TRAIN, min_count=2)
    assert lem.lemmatize(["went", "The", "is"], ["VERB", "DET", "AUX"], ["VBD", "DT", "VBZ"]) \
        == ["go", "the", "be"]
    # unseen words: suffix rules learned per XPOS
    assert lem.lemma("ponies", "NOUN", "NNS") == "pony"
    assert lem.lemma("jumped", "VERB", "VBD") == "jump"
    assert lem.lemma("horses", "NOUN", "NNS") == "horse"
    assert lem.lemma("cars", "NOUN", "NNS") == "car"
    # no rule for this tag: lowercased form, or the form itself for PROPN / no letters
    assert lem.lemma("Quickly", "ADV", "RB") == "quickly"
    assert lem.lemma("Zaman", "PROPN", "NNP") == "Zaman"
    assert lem.lemma("3.5", "NUM", "CD") == "3.5"


def test_save_load_round_trip(tmp_path, tiny_tuples):
    lem = Lemmatizer.train(tiny_tuples)
    lem.save(str(tmp_path))
    again = Lemmatizer.load(str(tmp_path))
    for s in tiny_tuples:
        args = ([w[0] for w in s], [w[1] for w in s], [w[2] for w in s])
        assert again.lemmatize(*args) == lem.lemmatize(*args)
    assert lem.lemmatize(*args) == [w[3] for w in s]


def test_shipped_lemmatizer(shipped_dir):
    lem = Lemmatizer.load(f"{shipped_dir}/lemmatizer")
    assert lem.lemmatize(["children", "were", "running"], ["NOUN", "AUX", "VERB"],
                         ["NNS", "VBD", "VBG"]) == ["child", "be", "run"]
