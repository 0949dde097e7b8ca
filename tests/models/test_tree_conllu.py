"""Parsed trees written as CoNLL-U (`models/tree_conllu.py`), checked by the official UD
validator at levels 1 and 2."""
from __future__ import annotations

from models.conllu import read_conllu_string
from models.tree_conllu import trees_conllu


def word(i, form, head, deprel, start=None, end=None, space_after=None, **tags):
    t = {"id": i, "form": form, "lemma": tags.get("lemma", form.lower()),
         "upos": tags.get("upos", "X"), "xpos": tags.get("xpos", "_"),
         "feats": tags.get("feats", "_"), "head": head, "deprel": deprel}
    if start is not None:
        t.update(start=start, end=end, space_after=space_after)
    return t


# "I don't\n  know." as the tokenizer gives it: "don't" is one token of two words
DONT = {"tokens": [word(1, "I", 4, "nsubj", 0, 1, True, upos="PRON"),
                   word(2, "do", 4, "aux", 2, 4, False, upos="AUX"),
                   word(3, "n't", 4, "advmod", 4, 7, True, upos="PART"),
                   word(4, "know", 0, "root", 10, 14, False, upos="VERB"),
                   word(5, ".", 4, "punct", 14, 15, True, upos="PUNCT")],
        "multiword": [{"first": 2, "last": 3, "form": "don't", "start": 2, "end": 7}],
        "stats": {}}


def test_multiword_range_spaceafter_tokenrange_and_one_line_text(ud_errors):
    out = trees_conllu([DONT])
    assert out.splitlines() == [
        "# sent_id = 1",
        "# text = I don't know.",
        "1\tI\ti\tPRON\t_\t_\t4\tnsubj\t_\tTokenRange=0:1",
        "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\tTokenRange=2:7",
        "2\tdo\tdo\tAUX\t_\t_\t4\taux\t_\t_",
        "3\tn't\tn't\tPART\t_\t_\t4\tadvmod\t_\t_",
        "4\tknow\tknow\tVERB\t_\t_\t0\troot\t_\tSpaceAfter=No|TokenRange=10:14",
        "5\t.\t.\tPUNCT\t_\t_\t4\tpunct\t_\tTokenRange=14:15",
        ""]
    assert ud_errors(out) == []


def test_a_multiword_token_glued_to_the_next_gets_spaceafter_on_its_range_line(ud_errors):
    tree = {"tokens": [word(1, "do", 3, "aux", 0, 2, False), word(2, "n't", 3, "advmod", 2, 5,
                                                                 False),
                       word(3, "!", 0, "root", 5, 6, True)],
            "multiword": [{"first": 1, "last": 2, "form": "don't", "start": 0, "end": 5}]}
    sent = read_conllu_string(trees_conllu([tree]))[0]
    assert sent.text == "don't!"
    assert "1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No|TokenRange=0:5" in sent.lines
    assert ud_errors(trees_conllu([tree])) == []


def test_values_in_nfc_with_single_spaces_and_confidence(ud_errors):
    # pre-tokenized input may hold decomposed letters and spaces inside a token
    tree = {"tokens": [word(1, "cafe\u0301", 2, "nsubj", lemma=""),
                       word(2, " New   York ", 0, "root")],
            "stats": {"confidence": [0.5, 1.0]}}
    out = trees_conllu([tree], first_id=7)
    sent = read_conllu_string(out)[0]
    assert sent.text == "café New York" and sent.comments[0] == "# sent_id = 7"
    assert [(w.form, w.lemma, w.misc) for w in sent.words] == [
        ("café", "_", "HeadConf=0.500"), ("New York", "new york", "HeadConf=1.000")]
    assert ud_errors(out) == []
