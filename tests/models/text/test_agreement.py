"""Finite verbs take Person and Number from their parsed subject (EWT conventions)."""
from __future__ import annotations

from models.text.agreement import agree_with_subjects

VBD3 = "Mood=Ind|Number=Sing|Person=3|Tense=Past|VerbForm=Fin"
FIRST = "Case=Nom|Number=Sing|Person=1|PronType=Prs"
THEY = "Case=Nom|Number=Plur|Person=3|PronType=Prs"
WE = "Case=Nom|Number=Plur|Person=1|PronType=Prs"


def test_a_past_verb_takes_its_subjects_person_and_number():
    out = agree_with_subjects([FIRST, VBD3, "_"], [2, 0, 2], ["nsubj", "root", "punct"],
                              ["I", "left", "."], ["I", "leave", "."], ["PRP", "VBD", "."])
    assert out == [FIRST, "Mood=Ind|Number=Sing|Person=1|Tense=Past|VerbForm=Fin", "_"]
    out = agree_with_subjects([THEY, VBD3], [2, 0], ["nsubj", "root"], ["they", "left"],
                              None, ["PRP", "VBD"])
    assert out[1] == "Mood=Ind|Number=Plur|Person=3|Tense=Past|VerbForm=Fin"


def test_aux_cop_and_conjoined_verbs_use_their_heads_subject():
    have = "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
    # we have left and came back
    out = agree_with_subjects([WE, have, "VerbForm=Part", "_", VBD3],
                              [3, 3, 0, 5, 3], ["nsubj", "aux", "root", "cc", "conj"],
                              ["we", "have", "left", "and", "came"],
                              ["we", "have", "leave", "and", "come"],
                              ["PRP", "VBP", "VBN", "CC", "VBD"])
    assert out[1] == "Mood=Ind|Number=Plur|Person=1|Tense=Pres|VerbForm=Fin"
    assert out[4] == "Mood=Ind|Number=Plur|Person=1|Tense=Past|VerbForm=Fin"
    assert out[2] == "VerbForm=Part"                      # not finite: untouched


def test_what_is_left_alone():
    noun = "Number=Sing"
    vbz = "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
    md = "VerbForm=Fin"
    cases = [  # (feats, heads, deprels, forms, lemmas, xpos)
        ([FIRST, VBD3], [2, 0], ["nsubj", "root"], ["I", "was"], ["I", "be"], ["PRP", "VBD"]),
        ([FIRST, VBD3], [2, 0], ["nsubj", "root"], ["I", "was"], ["_", "_"], ["PRP", "VBD"]),
        ([THEY, vbz], [2, 0], ["nsubj", "root"], ["they", "goes"], None, ["PRP", "VBZ"]),
        ([FIRST, md], [2, 0], ["nsubj", "root"], ["I", "can"], None, ["PRP", "MD"]),
        ([VBD3, noun], [0, 1], ["root", "obj"], ["left", "it"], None, ["VBD", "PRP"]),
    ]
    for feats, *rest in cases:
        assert agree_with_subjects(feats, *rest) == feats


def test_a_subject_without_person_is_third_person_and_keeps_the_number_it_lacks():
    who = "PronType=Rel"
    vbd1 = "Mood=Ind|Number=Plur|Person=1|Tense=Past|VerbForm=Fin"
    out = agree_with_subjects([who, vbd1], [2, 0], ["nsubj", "root"], ["who", "left"], None,
                              ["WP", "VBD"])
    assert out[1] == "Mood=Ind|Number=Plur|Person=3|Tense=Past|VerbForm=Fin"


def test_the_pipeline_applies_it_after_parsing():
    from models.serve.pipeline import Pipeline

    tree = Pipeline.load("en_ewt").parse_words(["I", "left", "early", "."], "mst")
    left = tree.tokens[1]
    assert left.head == 0 and tree.tokens[0].deprel == "nsubj"
    assert "Person=1" in left.feats.split("|")
