"""Multiword tokens learned from a treebank (`models/text/multiword.py`) and split by the
tokenizer with their spans."""
from __future__ import annotations

import numpy as np
import pytest

from models.text._conllu import read_conllu
from models.text.lexicon import Lexicon, learn_lexicon
from models.text.multiword import LEGACY_SUFFIXES, MultiwordRules, fold, learn_multiword
from models.text.splitter import SentenceSplitter
from models.text.tokenizer import Token, Tokenizer


def treebank(tmp_path, sentences: list[list[str | tuple[str, ...]]]):
    """Front-end sentences from token lists: a tuple is a multiword token (surface, words...)."""
    blocks = []
    for k, toks in enumerate(sentences):
        lines, i = [f"# sent_id = {k}"], 1
        for t in toks:
            if isinstance(t, tuple):
                surface, *words = t
                lines.append(f"{i}-{i + len(words) - 1}\t{surface}" + "\t_" * 8)
            else:
                words = [t]
            for w in words:
                lines.append(f"{i}\t{w}\t_\tX\t_\t_\t{0 if i == 1 else 1}\tdep\t_\t_")
                i += 1
        blocks.append("\n".join(lines) + "\n")
    path = tmp_path / "train.conllu"
    path.write_text("\n".join(blocks) + "\n", encoding="utf-8")
    return read_conllu(str(path))


def test_full_rules_keep_the_token_casing_and_need_a_majority(tmp_path):
    sents = treebank(tmp_path, [
        ["I", ("don't", "do", "n't"), "know"], [("Don't", "Do", "n't"), "go"],
        [("gonna", "gon", "na"), "win"], ["wanna"], [("wanna", "wan", "na")], ["wanna"]])
    rules = learn_multiword(sents)
    assert rules.full == {"don't": ["do", "n't"], "gonna": ["gon", "na"]}
    assert rules.split("DON'T") == ["DO", "N'T"] and rules.split("Don't") == ["Do", "n't"]
    assert rules.split("Don’t") == ["Do", "n’t"]       # the typographic apostrophe folds
    assert rules.split("wanna") is None                 # split once, whole twice


def test_suffix_rule_generalises_a_productive_clitic_and_not_a_common_ending(tmp_path):
    # Turkish -ki after a locative: five types support "daki", "aki" and "ki"; plain words
    # end in "aki" (saki, baki) and in "ki" (iki), so only "daki" generalises
    sents = treebank(tmp_path, [
        [(f"{stem}daki", f"{stem}da", "ki"), "ev"] for stem in ("okul", "masa", "yol", "ada",
                                                                "oda")] + [["saki", "baki", "iki"]])
    rules = learn_multiword(sents)
    assert rules.suffixes == {"daki": ["da", "ki"]}
    assert rules.split("Kutudaki") == ["Kutuda", "ki"]   # unseen, split by the suffix rule
    assert rules.split("taki") is None and rules.split("daki") is None  # one character left


def test_suffix_rules_that_a_shorter_one_implies_are_dropped(tmp_path):
    sents = treebank(tmp_path, [[(f"{w}n't", w, "n't")] for w in (
        "do", "does", "did", "is", "was", "were", "have", "has", "had", "could", "would")])
    rules = learn_multiword(sents)
    assert rules.suffixes == {"n't": ["", "n't"]}        # not "on't" -> "o" + "n't", ...
    assert rules.split("Shouldn't") == ["Should", "n't"]


def test_words_that_do_not_spell_the_token_take_its_case():
    rules = MultiwordRules({"del": ["de", "el"], "au": ["à", "le"]}, {})
    assert rules.split("del") == ["de", "el"]
    assert rules.split("Del") == ["De", "el"]
    assert rules.split("DEL") == ["DE", "EL"]
    assert rules.split("Au") == ["À", "le"]


def test_fold_keeps_one_character_per_character():
    assert fold("İstanbul’da") == "istanbul'da" and len(fold("İİ")) == 2


def test_tokenizer_gives_each_word_its_token_span_and_spaces():
    lex = Lexicon(multiword=MultiwordRules({"del": ["de", "el"]}, dict(LEGACY_SUFFIXES)))
    text = "(I don't) go del\tsur"
    toks = Tokenizer(lex).tokenize_sentence(text)
    assert toks == [
        Token("(", 0, 1, None, False), Token("I", 1, 2, None, True),
        Token("do", 3, 5, (3, 8), False), Token("n't", 5, 8, (3, 8), False),
        Token(")", 8, 9, None, True), Token("go", 10, 12, None, True),
        Token("de", 13, 16, (13, 16), False), Token("el", 13, 16, (13, 16), True),
        Token("sur", 17, 20, None, True)]


def test_combining_marks_stay_in_their_word():
    text = "cafe\u0301s !\u0301"          # not in NFC: "cafés" with a combining accent
    assert [t.form for t in Tokenizer(Lexicon()).tokenize_sentence(text)] == [
        "cafe\u0301s", "!\u0301"]


def test_no_sentence_ends_inside_a_multiword_token():
    # a splitter whose bias votes "boundary" after every word
    splitter = SentenceSplitter(n_bits=4)
    splitter.weights = np.ones(16, np.float32)
    tok = Tokenizer(Lexicon(multiword=MultiwordRules({}, dict(LEGACY_SUFFIXES))), splitter)
    sents = tok.tokenize("I don't go")
    assert [[t.form for t in s] for s in sents] == [["I"], ["do", "n't"], ["go"]]


def test_format_1_lexicon_loads_and_splits_as_its_tokenizer_did():
    lex = Lexicon.from_json({"format_version": 1, "abbreviations": [], "joined": [],
                             "hyphen_prefixes": [], "mwt": {"can't": [2, 3], "gonna": [3, 2]}})
    tok = Tokenizer(lex)
    assert [(t.form, t.mwt) for t in tok.tokenize_sentence("can't, gonna, John's")] == [
        ("ca", (0, 5)), ("n't", (0, 5)), (",", None), ("gon", (7, 12)), ("na", (7, 12)),
        (",", None), ("John", (14, 20)), ("'s", (14, 20))]
    assert Lexicon.from_json(lex.to_json()) == lex      # and saves as format 2


@pytest.mark.parametrize("text, words", [
    ("I don't know", ["I", "do", "n't", "know"]),
    ("It's John's", ["It", "'s", "John", "'s"]),
])
def test_rules_learned_from_ewt_excerpt(tiny, text, words):
    tok = Tokenizer(learn_lexicon(tiny))
    out = tok.tokenize_sentence(text)
    assert [t.form for t in out] == words
    assert all(t.mwt is not None for t in out if t.form in ("do", "n't", "It", "John", "'s"))
