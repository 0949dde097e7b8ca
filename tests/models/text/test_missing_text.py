"""A sentence without a `# text` line (required since UD 2, missing from some files)
gets the text its tokens and SpaceAfter=No define, so the tokenizer and sentence
splitter learn from such a treebank instead of from nothing."""
from __future__ import annotations

import logging

from models.text._conllu import read_conllu
from models.text.train import evaluate_tokenizer, train_tokenizer

SENTENCE = """\
1\tDogs\tdog\tNOUN\t_\t_\t2\tnsubj\t_\t_
2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No
2\tdo\tdo\tAUX\t_\t_\t4\taux\t_\t_
3\tn't\tnot\tPART\t_\t_\t4\tadvmod\t_\t_
4\tbark\tbark\tVERB\t_\t_\t0\troot\t_\tSpaceAfter=No
5\t.\t.\tPUNCT\t_\t_\t4\tpunct\t_\t_
"""


def test_the_text_is_rebuilt_from_the_tokens_and_said(tmp_path, caplog):
    path = tmp_path / "no_text.conllu"
    path.write_text("# sent_id = 1\n" + SENTENCE + "\n# text = Given text.\n"
                    + SENTENCE + "\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        first, second = read_conllu(str(path))
    assert first.text == "Dogs don'tbark."              # no space where SpaceAfter=No
    assert [s[1] - s[0] for s in first.word_spans()] == [4, 2, 3, 4, 1]
    assert second.text == "Given text."                  # a given text is kept
    assert "1 sentence(s) without a `# text` line" in caplog.text


def test_a_treebank_without_text_trains_a_tokenizer_that_splits(tmp_path):
    sents = ["The cat sat .", "Dogs bark loudly !", "It rained all day .", "We left early ."]
    body = []
    for k in range(40):
        words = sents[k % 4].split()
        rows = [f"{i}\t{w}\t_\tX\t_\t_\t{0 if i == 1 else 1}\tdep\t_\t"
                + ("SpaceAfter=No" if i == len(words) - 1 else "_")
                for i, w in enumerate(words, 1)]
        body.append(("# newdoc\n" if k % 8 == 0 else "") + "\n".join(rows) + "\n")
    path = tmp_path / "train.conllu"
    path.write_text("\n".join(body) + "\n", encoding="utf-8")
    sentences = read_conllu(str(path))
    scores = evaluate_tokenizer(train_tokenizer(sentences), sentences)
    assert scores["token_f1"] == 1.0 and scores["sentence_f1"] > 0.9, scores
