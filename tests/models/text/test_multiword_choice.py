"""Forms that are a multiword token in some places only, decided from their neighbours
(`models/text/multiword_choice.py`) inside the tokenizer."""
from __future__ import annotations

import json

from test_multiword import treebank

from models.text.lexicon import Lexicon
from models.text.multiword import learn_multiword
from models.text.multiword_choice import MultiwordChooser
from models.text.tokenizer import Token, Tokenizer

NOUNS = ("roof", "owner", "name", "price", "color", "engine")
AFTER_IS = ("a", "not", "so", "the", "really", "great")


def its_treebank(tmp_path):
    """"its" is it + s before the words of AFTER_IS and the possessive before nouns:
    possessive more often, so the rules alone would never split it."""
    sents = []
    for k in range(4):
        for n in NOUNS:
            sents.append(["I", "like", "its", n])
        for w in AFTER_IS[: 4 + k % 3]:
            sents.append([("its", "it", "s"), w, "fine"])
    sents += [["we", "saw", "it"], ["the", "engine", "runs"]]
    return treebank(tmp_path, sents)


def trained(sentences):
    """The chooser as `train_tokenizer` trains it: against the treebank's own rules."""
    return MultiwordChooser.train(sentences, learn_multiword(sentences))


def test_the_chooser_splits_a_form_by_the_words_after_it(tmp_path):
    chooser = trained(its_treebank(tmp_path))
    assert chooser is not None and chooser.words == {"its": ["it", "s"]}
    assert chooser.split(["I"], "its", ["a", "fine"]) == ["it", "s"]
    assert chooser.split(["like"], "Its", ["not", "bad"]) == ["It", "s"]   # token's casing
    assert chooser.split(["like"], "its", ["roof"]) is None
    assert chooser.split([], "its", []) in (None, ["it", "s"])     # at a text's edges too


def test_the_tokenizer_gives_split_words_the_token_span(tmp_path):
    tok = Tokenizer(Lexicon(), chooser=trained(its_treebank(tmp_path)))
    assert tok.tokenize_sentence("its a deal, its roof") == [
        Token("it", 0, 2, (0, 3), False), Token("s", 2, 3, (0, 3), True),
        Token("a", 4, 5, None, True), Token("deal", 6, 10, None, False),
        Token(",", 10, 11, None, True), Token("its", 12, 15, None, True),
        Token("roof", 16, 20, None, True)]
    # the same pieces one at a time, with the limit that stops a hostile text early
    assert len(tok.tokenize_sentence("its a deal, its roof", limit=2)) == 3


def test_a_form_whose_context_does_not_help_is_left_to_the_rules(tmp_path):
    # split or not at random with respect to the next word: no better than the majority
    sents = treebank(tmp_path, [
        [("wanna", "wan", "na"), "go"], ["wanna", "go"], ["wanna", "go"],
        [("wanna", "wan", "na"), "eat"], ["wanna", "eat"], ["wanna", "eat"],
        [("wanna", "wan", "na"), "win"], ["wanna", "win"], ["wanna", "win"]])
    assert trained(sents) is None


def test_a_treebank_without_ambiguous_forms_has_no_chooser(tmp_path):
    sents = treebank(tmp_path, [[("don't", "do", "n't"), "go"], ["I", "go"]] * 3)
    assert trained(sents) is None


def test_the_chooser_is_saved_with_the_tokenizer_and_old_directories_load(tmp_path):
    tok = Tokenizer(Lexicon(), chooser=trained(its_treebank(tmp_path)))
    tok.save(str(tmp_path / "tok"))
    again = Tokenizer.load(str(tmp_path / "tok"))
    for text in ("its a deal", "I like its price", "Its not so bad"):
        assert again.tokenize_sentence(text) == tok.tokenize_sentence(text)
    # a tokenizer saved before choosers existed has no such key in its header
    header = tmp_path / "tok" / "tokenizer.json"
    data = json.loads(header.read_text())
    del data["has_multiword_choice"]
    header.write_text(json.dumps(data))
    old = Tokenizer.load(str(tmp_path / "tok"))
    assert old.chooser is None
    assert [t.form for t in old.tokenize_sentence("its a deal")] == ["its", "a", "deal"]
