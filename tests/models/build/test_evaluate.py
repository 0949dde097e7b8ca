"""CoNLL 2018 metrics on literal fixtures, and `deptree evaluate` end to end.

Every expected figure below was computed by running the official CoNLL 2018 scorer
(`conll18_ud_eval.py -c` and `-v`, ufal/conll2018) by hand on these same fixtures.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from models.build.evaluate import (
    METRICS,
    evaluate_files,
    evaluate_sentences,
    evaluate_texts,
    format_report,
    score_files,
    score_texts,
)
from models.conllu import read_conllu_string
from models.errors import AlignmentError, ConlluError, TreeError

REPO = Path(__file__).parents[3]


def block(*rows, comment="# sent_id = s"):
    lines = [comment] if comment else []
    for i, (form, upos, head, deprel) in enumerate(rows, 1):
        lines.append(f"{i}\t{form}\t_\t{upos}\t_\t_\t{head}\t{deprel}\t_\t_")
    return "\n".join(lines) + "\n\n"


def conllu(*lines: str) -> str:
    """CoNLL-U text from lines whose columns are separated by runs of 2+ spaces."""
    return "\n".join(re.sub(r" {2,}", "\t", ln) for ln in lines) + "\n"


# --- same tokens: trees only ---------------------------------------------------------
GOLD = block(
    ("The", "DET", 2, "det"),
    ("cat", "NOUN", 3, "nsubj"),
    ("sat", "VERB", 0, "root"),
    (".", "PUNCT", 3, "punct"),
) + block(
    ("Dogs", "NOUN", 2, "nsubj"),
    ("bark", "VERB", 0, "root"),
    ("loudly", "ADV", 2, "advmod"),
    ("today", "NOUN", 2, "obl:tmod"),
    ("!", "PUNCT", 2, "punct"),
)
# By hand:                          head  label
PRED = block(
    ("The", "DET", 2, "det"),        # ok    ok
    ("cat", "NOUN", 3, "obj"),       # ok    wrong
    ("sat", "VERB", 0, "root"),      # ok    ok
    (".", "PUNCT", 2, "punct"),      # wrong ok
    comment=None,
) + block(
    ("Dogs", "NOUN", 2, "nsubj"),    # ok    ok
    ("bark", "VERB", 0, "root"),     # ok    ok
    ("loudly", "ADV", 4, "advmod"),  # wrong ok
    ("today", "NOUN", 2, "obl"),     # ok    ok: LAS compares "obl" of "obl:tmod"
    ("!", "PUNCT", 2, "punct"),      # ok    ok
    comment=None,
)
# (correct, gold, predicted, aligned) as `conll18_ud_eval.py -c` prints them
TREE_COUNTS = {
    "Tokens": (9, 9, 9, None), "Sentences": (2, 2, 2, None), "Words": (9, 9, 9, None),
    "UPOS": (9, 9, 9, 9), "XPOS": (9, 9, 9, 9), "UFeats": (9, 9, 9, 9),
    "AllTags": (9, 9, 9, 9), "Lemmas": (9, 9, 9, 9), "UAS": (7, 9, 9, 9),
    "LAS": (6, 9, 9, 9), "CLAS": (4, 6, 6, 6), "MLAS": (4, 6, 6, 6), "BLEX": (4, 6, 6, 6),
}

# --- same tokens: tags, features, lemmas, functional children ------------------------
TAGS_GOLD = conllu(
    "1  She  she  PRON  PRP  Case=Nom|Gender=Fem|Number=Sing|Person=3|PronType=Prs  3  nsubj  _  _",
    "2  has  have  AUX  VBZ  Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin  3  aux  _  _",
    "3  left  leave  VERB  VBN  Tense=Past|VerbForm=Part  0  root  _  _",
    "4  the  _  DET  DT  Definite=Def|PronType=Art  5  det  _  _",
    "5  house  house  NOUN  NN  Number=Sing  3  obj  _  SpaceAfter=No",
    "6  .  .  PUNCT  .  _  3  punct  _  _",
    "",
)
TAGS_PRED = conllu(
    # features in another order: same UFeats
    "1  She  she  PRON  PRP  PronType=Prs|Person=3|Number=Sing|Gender=Fem|Case=Nom  3  nsubj  _  _",
    # wrong UPOS of a functional child: its head "left" loses MLAS
    "2  has  have  VERB  VBZ  Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin  3  aux  _  _",
    # wrong XPOS and lemma: AllTags, Lemmas and BLEX
    "3  left  left  VERB  VBD  Tense=Past|VerbForm=Part  0  root  _  _",
    # gold lemma "_" matches any; "Typo" is not a universal feature of the scorer
    "4  the  a  DET  DT  Definite=Def|PronType=Art|Typo=Yes  5  det  _  _",
    "5  house  house  NOUN  NN  Number=Sing  3  obj  _  _",
    "6  .  .  PUNCT  .  _  5  punct  _  _",
    "",
)
TAGS_COUNTS = {
    "Tokens": (6, 6, 6, None), "Sentences": (1, 1, 1, None), "Words": (6, 6, 6, None),
    "UPOS": (5, 6, 6, 6), "XPOS": (5, 6, 6, 6), "UFeats": (6, 6, 6, 6),
    "AllTags": (4, 6, 6, 6), "Lemmas": (5, 6, 6, 6), "UAS": (5, 6, 6, 6),
    "LAS": (5, 6, 6, 6), "CLAS": (3, 3, 3, 3), "MLAS": (2, 3, 3, 3), "BLEX": (2, 3, 3, 3),
}

# --- other tokens, a multiword token on each side, other sentence splits --------------
RAW_GOLD = conllu(
    "# text = I can't go today.",
    "1  I  I  PRON  PRP  Case=Nom|Number=Sing|Person=1|PronType=Prs  4  nsubj  _  _",
    "2-3  can't  _  _  _  _  _  _  _  _",
    "2  ca  can  AUX  MD  VerbForm=Fin  4  aux  _  _",
    "3  n't  not  PART  RB  _  4  advmod  _  _",
    "4  go  go  VERB  VB  VerbForm=Inf  0  root  _  _",
    "5  today  today  NOUN  NN  Number=Sing  4  obl:tmod  _  SpaceAfter=No",
    "6  .  .  PUNCT  .  _  4  punct  _  _",
    "",
    "# text = New York is big.",
    "1  New  New  PROPN  NNP  Number=Sing  2  compound  _  _",
    "2  York  York  PROPN  NNP  Number=Sing  4  nsubj  _  _",
    "3  is  be  AUX  VBZ  Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin  4  cop  _  _",
    "4  big  big  ADJ  JJ  Degree=Pos  0  root  _  SpaceAfter=No",
    "5  .  .  PUNCT  .  _  4  punct  _  _",
    "",
)
# One sentence; "can't" split as can + n't (only n't aligns, by LCS); "today." and
# "New York" (a space inside a FORM) are one token each, so their words do not align.
RAW_PRED = conllu(
    "1  I  I  PRON  PRP  Case=Nom|Number=Sing|Person=1|PronType=Prs  4  nsubj  _  _",
    "2-3  can't  _  _  _  _  _  _  _  _",
    "2  can  can  AUX  MD  VerbForm=Fin  4  aux  _  _",
    "3  n't  not  PART  RB  _  4  advmod  _  _",
    "4  go  go  VERB  VB  VerbForm=Inf  0  root  _  _",
    "5  today.  today.  NOUN  NN  _  4  obl  _  _",
    "6  New York  New York  PROPN  NNP  Number=Sing  8  nsubj  _  _",
    "7  is  be  AUX  VBZ  Number=Sing|Mood=Ind|Person=3|Tense=Pres|VerbForm=Fin  8  cop  _  _",
    "8  big  big  ADJ  JJ  Degree=Pos  4  parataxis  _  _",
    "9  .  .  PUNCT  .  _  8  punct  _  _",
    "",
)
RAW_COUNTS = {
    "Tokens": (6, 10, 8, None), "Sentences": (0, 2, 1, None), "Words": (6, 11, 9, None),
    "UPOS": (6, 11, 9, 6), "XPOS": (6, 11, 9, 6), "UFeats": (6, 11, 9, 6),
    "AllTags": (6, 11, 9, 6), "Lemmas": (6, 11, 9, 6), "UAS": (5, 11, 9, 6),
    "LAS": (5, 11, 9, 6), "CLAS": (3, 7, 6, 4), "MLAS": (2, 7, 6, 4), "BLEX": (3, 7, 6, 4),
}
# `conll18_ud_eval.py -v RAW_GOLD RAW_PRED`, verbatim
RAW_TABLE = """\
Metric     | Precision |    Recall |  F1 Score | AligndAcc
-----------+-----------+-----------+-----------+-----------
Tokens     |     75.00 |     60.00 |     66.67 |
Sentences  |      0.00 |      0.00 |      0.00 |
Words      |     66.67 |     54.55 |     60.00 |
UPOS       |     66.67 |     54.55 |     60.00 |    100.00
XPOS       |     66.67 |     54.55 |     60.00 |    100.00
UFeats     |     66.67 |     54.55 |     60.00 |    100.00
AllTags    |     66.67 |     54.55 |     60.00 |    100.00
Lemmas     |     66.67 |     54.55 |     60.00 |    100.00
UAS        |     55.56 |     45.45 |     50.00 |     83.33
LAS        |     55.56 |     45.45 |     50.00 |     83.33
CLAS       |     50.00 |     42.86 |     46.15 |     75.00
MLAS       |     33.33 |     28.57 |     30.77 |     50.00
BLEX       |     50.00 |     42.86 |     46.15 |     75.00
"""


def counts_of(report):
    return {m: (s.correct, s.gold, s.system, s.aligned) for m, s in report.scores.items()}


@pytest.mark.parametrize("gold, pred, expected", [
    (GOLD, PRED, TREE_COUNTS),
    (TAGS_GOLD, TAGS_PRED, TAGS_COUNTS),
    (RAW_GOLD, RAW_PRED, RAW_COUNTS),
], ids=["trees", "tags", "raw-text"])
def test_counts_equal_the_official_scorers(gold, pred, expected):
    report = evaluate_texts(gold, pred)
    assert list(report.scores) == list(METRICS)
    assert counts_of(report) == expected


def test_table_equals_the_official_scorers():
    assert format_report(evaluate_texts(RAW_GOLD, RAW_PRED)) == RAW_TABLE


def test_counts_table_layout():
    table = format_report(evaluate_texts(RAW_GOLD, RAW_PRED), counts=True)
    lines = table.splitlines()
    assert lines[0] == "Metric     | Correct   |      Gold | Predicted | Aligned"
    assert lines[2] == "Tokens     |         6 |        10 |         8 |          "
    assert lines[4] == "Words      |         6 |        11 |         9 |         6"
    assert lines[-1] == "BLEX       |         3 |         7 |         6 |         4"


def test_fractions_and_report_properties():
    report = evaluate_texts(RAW_GOLD, RAW_PRED)
    las = report.scores["LAS"]
    assert las.precision == pytest.approx(5 / 9) and las.recall == pytest.approx(5 / 11)
    assert las.f1 == pytest.approx(2 * 5 / 20) and las.aligned_accuracy == pytest.approx(5 / 6)
    assert report.las == las.f1 and report.uas == report.scores["UAS"].f1
    assert report.scores["Words"].aligned_accuracy is None
    assert (report.sentences, report.words) == (2, 11)


def test_same_tokens_f1_is_the_accuracy():
    report = evaluate_sentences(read_conllu_string(GOLD), read_conllu_string(PRED))
    assert report.uas == pytest.approx(7 / 9) and report.las == pytest.approx(6 / 9)


def test_gold_against_itself_is_perfect():
    report = evaluate_texts(RAW_GOLD, RAW_GOLD)
    assert all(s.f1 == 1.0 for s in report.scores.values())


def test_score_files_returns_a_plain_dict(tmp_path):
    (tmp_path / "g.conllu").write_text(RAW_GOLD, encoding="utf-8")
    (tmp_path / "p.conllu").write_text(RAW_PRED, encoding="utf-8")
    scores = score_files(tmp_path / "g.conllu", tmp_path / "p.conllu")
    assert scores == score_texts(RAW_GOLD, RAW_PRED)
    assert list(scores) == list(METRICS)
    assert scores["MLAS"]["f1"] == pytest.approx(4 / 13)
    assert scores["Tokens"]["aligned_accuracy"] is None
    assert set(scores["UAS"]) == {"precision", "recall", "f1", "aligned_accuracy",
                                  "correct", "gold", "system", "aligned"}
    json.dumps(scores)  # plain JSON types only


def test_empty_nodes_are_skipped_and_spaces_in_forms_ignored():
    gold = conllu("1  New York  _  PROPN  _  _  0  root  _  _",
                  "1.1  is  _  AUX  _  _  _  _  0:root  _",
                  "2  !  _  PUNCT  _  _  1  punct  _  _", "")
    pred = conllu("1  NewYork  _  PROPN  _  _  0  root  _  _",
                  "2  !  _  PUNCT  _  _  1  punct  _  _", "")
    report = evaluate_texts(gold, pred)
    assert counts_of(report)["Tokens"] == (2, 2, 2, None)
    assert counts_of(report)["LAS"] == (2, 2, 2, 2)


def test_missing_predicted_head_counts_as_wrong():
    gold = block(("Hi", "INTJ", 0, "root"), ("!", "PUNCT", 1, "punct"))
    pred = block(("Hi", "INTJ", "_", "root"), ("!", "PUNCT", 1, "punct"))
    report = evaluate_texts(gold, pred)
    assert counts_of(report)["UAS"] == (1, 2, 2, 2)


def test_invalid_gold_tree_raises():
    gold = read_conllu_string(block(("a", "X", 0, "root"), ("b", "X", 0, "root")))
    with pytest.raises(TreeError, match="2 words are attached to the root"):
        evaluate_sentences(gold, gold)


def test_different_text_raises_with_both_places():
    pred = RAW_PRED.replace("today.", "tomorrow.")
    with pytest.raises(AlignmentError) as info:
        evaluate_texts(RAW_GOLD, pred)
    msg = str(info.value)
    assert "from character 10" in msg and msg.endswith("[E044]")
    assert "gold 'day.NewYorkisbig.' (<gold>:7)" in msg
    assert "prediction 'morrow.NewYorkisbig.' (<prediction>:6)" in msg


def test_prediction_that_stops_early_raises():
    pred = conllu("1  I  _  _  _  _  0  root  _  _", "")
    with pytest.raises(AlignmentError, match=r"prediction '' \(end of file\)"):
        evaluate_texts(RAW_GOLD, pred)


def test_form_of_only_spaces_raises():
    gold = conllu("1  a  _  X  _  _  0  root  _  _", "2  \u00a0  _  X  _  _  1  dep  _  _", "")
    with pytest.raises(ConlluError, match=r"<gold>:2: FORM '\\xa0' is only spaces"):
        evaluate_texts(gold, gold)


def test_evaluate_files(tmp_path):
    (tmp_path / "gold.conllu").write_text(GOLD, encoding="utf-8")
    (tmp_path / "pred.conllu").write_text(PRED, encoding="utf-8")
    report = evaluate_files(tmp_path / "gold.conllu", tmp_path / "pred.conllu")
    assert counts_of(report) == TREE_COUNTS


# --- the command line ---------------------------------------------------------------


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "deptree.cli", *map(str, args)],
        check=False, cwd=REPO, capture_output=True, text=True, timeout=60,
    )


@pytest.fixture
def files(tmp_path):
    def write(name, text):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path
    return write


def test_cli_prints_the_official_table(files):
    proc = run_cli("evaluate", files("gold.conllu", RAW_GOLD), files("pred.conllu", RAW_PRED))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == RAW_TABLE


def test_cli_json(files):
    proc = run_cli("evaluate", "--json", files("g.conllu", RAW_GOLD), files("p.conllu", RAW_PRED))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert list(out) == list(METRICS)
    assert {m: (v["correct"], v["gold"], v["system"], v["aligned"])
            for m, v in out.items()} == RAW_COUNTS
    assert out["LAS"]["recall"] == pytest.approx(5 / 11)


def test_cli_counts(files):
    proc = run_cli("evaluate", "--counts", files("g.conllu", GOLD), files("p.conllu", PRED))
    assert proc.returncode == 0, proc.stderr
    assert "LAS        |         6 |         9 |         9 |         9" in proc.stdout


@pytest.mark.parametrize(
    "pred_text, fragments",
    [
        (PRED.replace("\tloudly\t", "\tloud\t"),
         ("from character 22: gold 'lytoday!' (", "gold.conllu:10), prediction 'today!' (",
          "pred.conllu:9) [E044]")),
        (PRED.split("\n\n", 1)[0] + "\n\n", ("prediction '' (end of file)",)),
        (PRED.replace("\t4\tadvmod", "\tx\tadvmod"),
         ("pred.conllu:8: HEAD 'x' is not an integer [E003]",)),
    ],
)
def test_cli_error_exits_2_with_message_not_traceback(files, pred_text, fragments):
    proc = run_cli("evaluate", files("gold.conllu", GOLD), files("pred.conllu", pred_text))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("deptree: error: ")
    for fragment in fragments:
        assert fragment in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_missing_file_exits_2(files, tmp_path):
    proc = run_cli("evaluate", files("gold.conllu", GOLD), tmp_path / "missing.conllu")
    assert proc.returncode == 2
    assert "missing.conllu: cannot read file" in proc.stderr
    assert "Traceback" not in proc.stderr
