from __future__ import annotations

from models.text.feats import FeatsGuesser

TRAIN = [
    [("I", "PRON", "PRP", "I", "Case=Nom|Number=Sing|Person=1|PronType=Prs"),
     ("have", "VERB", "VBP", "have", "Mood=Ind|Number=Sing|Person=1|Tense=Pres|VerbForm=Fin"),
     ("cats", "NOUN", "NNS", "cat", "Number=Plur")],
    [("They", "PRON", "PRP", "they", "Case=Nom|Number=Plur|Person=3|PronType=Prs"),
     ("have", "VERB", "VBP", "have", "Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin"),
     ("dogs", "NOUN", "NNS", "dog", "Number=Plur")],
    [("They", "PRON", "PRP", "they", "Case=Nom|Number=Plur|Person=3|PronType=Prs"),
     ("have", "VERB", "VBP", "have", "Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin"),
     ("time", "NOUN", "NN", "time", "Number=Sing")],
    [("I", "PRON", "PRP", "I", "Case=Nom|Number=Sing|Person=1|PronType=Prs"),
     ("have", "VERB", "VBP", "have", "Mood=Ind|Number=Sing|Person=1|Tense=Pres|VerbForm=Fin"),
     ("it", "PRON", "PRP", "it", "Case=Acc|Gender=Neut|Number=Sing|Person=3|PronType=Prs")],
]


def test_feats_from_word_tags_and_left_context(tmp_path):
    g = FeatsGuesser.train(TRAIN)
    assert g.predict(["I", "have", "horses"], ["PRON", "VERB", "NOUN"], ["PRP", "VBP", "NNS"]) \
        == ["Case=Nom|Number=Sing|Person=1|PronType=Prs",
            "Mood=Ind|Number=Sing|Person=1|Tense=Pres|VerbForm=Fin", "Number=Plur"]
    assert g.predict(["They", "have"], ["PRON", "VERB"], ["PRP", "VBP"])[1] \
        == "Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin"
    assert g.predict(["quickly"], ["ADV"], ["RB"]) == ["_"]
    g.save(str(tmp_path))
    again = FeatsGuesser.load(str(tmp_path))
    args = (["I", "have", "it"], ["PRON", "VERB", "PRON"], ["PRP", "VBP", "PRP"])
    assert again.predict(*args) == g.predict(*args)
