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
              ("raked", "VERB", "VBD", "rake"),
              ("Xvoked", "PROPN", "VBD", "Xvok"), ("Yvoked", "PROPN", "VBD", "Yvok")]]
    lem = Lemmatizer.train(train, min_count=2)
    assert lem.lemma("provoked", "VERB", "VBD") == "provok"
    lem.dictionary = WordClasses.build({}, {"verb": ["provoke"]}, {}, {})
    assert lem.lemma("provoked", "VERB", "VBD") == "provoke"
    # no candidate is a lemma: the longest suffix's rule, as without a dictionary
    assert lem.lemma("zvoked", "VERB", "VBD") == "zvok"
    # the dictionary only speaks for the parts of speech WordNet has
    assert lem.lemma("Provoked", "PROPN", "VBD") == "Provok"


def test_shipped_lemmatizer_uses_the_taggers_word_classes():
    from models.serve.pipeline import Pipeline

    pipe = Pipeline.load("en_ewt")
    assert pipe.lemmatizer.dictionary is pipe.tagger.word_classes is not None
    assert pipe.lemmatizer.lemma("hassled", "VERB", "VBD") == "hassle"


def test_without_xpos_the_rules_follow_upos():
    """A treebank without XPOS (hu_szeged) still lemmatizes by part of speech: the
    same ending takes a noun's rule or a verb's (keyed on XPOS alone, "_", the two
    rules tie and one of them wins for both)."""
    train = [[("abxes", "NOUN", "_", "abxe"), ("cdxes", "NOUN", "_", "cdxe"),
              ("efxes", "NOUN", "_", "efxe"),
              ("ghxes", "VERB", "_", "ghx"), ("ijxes", "VERB", "_", "ijx"),
              ("klxes", "VERB", "_", "klx")]]
    lem = Lemmatizer.train(train, min_count=2)
    assert lem.lemma("mnxes", "NOUN", "_") == "mnxe"
    assert lem.lemma("mnxes", "VERB", "_") == "mnx"


def test_a_format_1_file_still_lemmatizes_by_xpos(tmp_path):
    """Models built before the lemmatizer keyed on UPOS as well keep their lemmas."""
    import json

    (tmp_path / "lemmatizer.json").write_text(json.dumps({
        "format_version": 1, "max_suffix": 6, "min_count": 2,
        "exact": {"went\tVBD": "go"}, "lower": {"went\tVBD": "go"},
        "rules": {"VBD\tl\ted": ["lower", 2, ""]}}))
    lem = Lemmatizer.load(str(tmp_path))
    assert lem.lemma("went", "VERB", "VBD") == "go"
    assert lem.lemma("jumped", "NOUN", "VBD") == "jump"     # the XPOS alone decides
    assert lem.lemma("jumped", "VERB", "VBN") == "jumped"
    lem.save(str(tmp_path))                                   # and saved, stays format 1
    assert json.loads((tmp_path / "lemmatizer.json").read_text())["format_version"] == 1
    assert Lemmatizer.load(str(tmp_path)).lemma("jumped", "NOUN", "VBD") == "jump"


@pytest.mark.parametrize("order", [1, -1])
def test_tied_rules_break_by_first_occurrence(order):
    """Two rules as frequent as each other: the one seen first wins, in every run
    (not by the hash order of a set)."""
    a = [("xala", "NOUN", "N", "xal"), ("yala", "NOUN", "N", "yal")]        # "a" -> ""
    b = [("zola", "NOUN", "N", "zolum"), ("wola", "NOUN", "N", "wolum")]    # "a" -> "um"
    lem = Lemmatizer.train([(a + b)[::order]], min_count=2)
    assert lem.lemma("qula", "NOUN", "N") == ("qul" if order == 1 else "qulum")
