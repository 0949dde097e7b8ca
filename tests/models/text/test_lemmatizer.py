from __future__ import annotations

import pytest

from models.text.lemmatizer import Lemmatizer, apply_rule, edit_rule

TRAIN = [[
    ("studies", "NOUN", "NNS", "study"), ("flies", "VERB", "VBZ", "fly"),
    ("babies", "NOUN", "NNS", "baby"), ("cities", "NOUN", "NNS", "city"),
    ("walked", "VERB", "VBD", "walk"), ("talked", "VERB", "VBD", "talk"),
    ("went", "VERB", "VBD", "go"), ("The", "DET", "DT", "the"), ("is", "AUX", "VBZ", "be"),
    ("Smiths", "PROPN", "NNPS", "Smith"), ("cats", "NOUN", "NNS", "cat"),
    ("dogs", "NOUN", "NNS", "dog"), ("'s", "AUX", "VBZ", "be"),
    ("houses", "NOUN", "NNS", "house"),
    ("roses", "NOUN", "NNS", "rose"), ("pens", "NOUN", "NNS", "pen"),
    ("hats", "NOUN", "NNS", "hat"),
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


def test_whole_word_rewrites_are_not_suffix_rules():
    """Regression: "better" -> "good" was learned as a rule of the suffix "etter" and
    turned an unseen "wetter" into "good" (and "territories" into "terrPennines")."""
    train = [[("better", "ADJ", "JJR", "good"), ("fetter", "ADJ", "JJR", "good"),
              ("bigger", "ADJ", "JJR", "big"), ("taller", "ADJ", "JJR", "tall"),
              ("older", "ADJ", "JJR", "old")]]
    lem = Lemmatizer.train(train, min_count=2)
    assert lem.lemma("wetter", "ADJ", "JJR") != "good"
    assert lem.lemma("smaller", "ADJ", "JJR") == "small"


def test_a_dictionary_picks_the_suffix_rule_that_gives_a_lemma():
    """The longest suffix's rule gives "provok"; a shorter suffix's gives "provoke",
    which WordNet lists as a verb: with the dictionary that one wins."""
    from models.text.wordclasses import WordClasses

    train = [[("xvoked", "VERB", "VBD", "xvok"), ("yvoked", "VERB", "VBD", "yvok"),
              ("baked", "VERB", "VBD", "bake"), ("faked", "VERB", "VBD", "fake"),
              ("raked", "VERB", "VBD", "rake")]]
    lem = Lemmatizer.train(train, min_count=2)
    assert lem.lemma("provoked", "VERB", "VBD") == "provok"
    lem.dictionary = WordClasses.build({}, {"verb": ["provoke"]}, {}, {})
    assert lem.lemma("provoked", "VERB", "VBD") == "provoke"
    # no candidate is a lemma: the longest suffix's rule, as without a dictionary
    assert lem.lemma("zvoked", "VERB", "VBD") == "zvok"
    # the dictionary only speaks for the parts of speech WordNet has
    assert lem.lemma("provoked", "PROPN", "VBD") == "provok"


def test_shipped_lemmatizer_uses_the_taggers_word_classes():
    from models.pipeline import Pipeline

    pipe = Pipeline.load("en_ewt")
    assert pipe.lemmatizer.dictionary is pipe.tagger.word_classes is not None
    assert pipe.lemmatizer.lemma("hassled", "VERB", "VBD") == "hassle"
