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


# Hungarian-like nouns: the case ending, not the tags, says the FEATS
INE, DAT, NOM = "Case=Ine|Number=Sing", "Case=Dat|Number=Sing", "Case=Nom|Number=Sing"
SUFFIXED = [[(form, "NOUN", "_", form[:-3], feats)]
            for form, feats in [("házban", INE), ("kertben", INE), ("autóban", INE),
                                ("háznak", DAT), ("kertnek", DAT),
                                ("ház", NOM), ("kert", NOM), ("autó", NOM), ("fa", NOM)]]


def test_unseen_words_take_the_feats_of_their_ending(tmp_path):
    g = FeatsGuesser.train(SUFFIXED)
    assert g.predict(["hajóban"], ["NOUN"], ["_"]) == [INE]
    assert g.predict(["hajónak"], ["NOUN"], ["_"]) == [DAT]
    assert g.predict(["hajó"], ["NOUN"], ["_"]) == [NOM]          # by the tags'
    # every training word keeps its own FEATS, whatever was pruned
    for (form, upos, xpos, _, feats), in SUFFIXED:
        assert g.predict([form], [upos], [xpos]) == [feats]
    g.save(str(tmp_path))
    assert FeatsGuesser.load(str(tmp_path)).predict(["hajóban"], ["NOUN"], ["_"]) == [INE]


def test_a_format_1_file_without_suffixes_still_loads(tmp_path):
    import json

    (tmp_path / "feats.json").write_text(json.dumps({
        "format_version": 1, "by_word": {"it\tPRON\tPRP": "Case=Acc"},
        "by_tag": {"NOUN\tNNS": "Number=Plur"}, "by_prev_word": {}, "by_prev_tag": {}}))
    g = FeatsGuesser.load(str(tmp_path))
    assert g.predict(["it", "cats", "fast"], ["PRON", "NOUN", "ADV"], ["PRP", "NNS", "RB"]) \
        == ["Case=Acc", "Number=Plur", "_"]
