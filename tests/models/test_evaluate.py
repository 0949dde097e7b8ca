"""UAS/LAS on a hand-scored fixture, alignment errors, and `deptree evaluate` end to end."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from models.conllu import read_conllu_string
from models.errors import AlignmentError, TreeError
from models.evaluate import evaluate_files, evaluate_sentences, format_report

REPO = Path(__file__).parents[2]


def block(*rows, comment="# sent_id = s"):
    lines = [comment] if comment else []
    for i, (form, upos, head, deprel) in enumerate(rows, 1):
        lines.append(f"{i}\t{form}\t_\t{upos}\t_\t_\t{head}\t{deprel}\t_\t_")
    return "\n".join(lines) + "\n\n"


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
# Scored by hand:            head  label
PRED = block(
    ("The", "DET", 2, "det"),        # ok    ok
    ("cat", "NOUN", 3, "obj"),       # ok    wrong
    ("sat", "VERB", 0, "root"),      # ok    ok
    (".", "PUNCT", 2, "punct"),      # wrong ok     (punctuation)
    comment=None,
) + block(
    ("Dogs", "NOUN", 2, "nsubj"),    # ok    ok
    ("bark", "VERB", 0, "root"),     # ok    ok
    ("loudly", "ADV", 4, "advmod"),  # wrong ok
    ("today", "NOUN", 2, "obl"),     # ok    wrong: "obl" is not "obl:tmod"
    ("!", "PUNCT", 2, "punct"),      # ok    ok     (punctuation)
    comment=None,
)
# all 9 words: heads 7, labels 7, both 5; without the 2 PUNCT: heads 6, labels 5, both 4
EXPECTED = (
    "words 9 sentences 2\n"
    "UAS 77.78  LAS 55.56  LA 77.78  (all words)\n"
    "UAS 85.71  LAS 57.14  LA 71.43  (punctuation excluded, 7 words)\n"
)


def test_hand_computed_scores():
    report = evaluate_sentences(read_conllu_string(GOLD), read_conllu_string(PRED))
    assert report.sentences == 2
    assert (report.all.words, report.all.heads, report.all.labels, report.all.arcs) == (9, 7, 7, 5)
    assert (report.no_punct.words, report.no_punct.heads, report.no_punct.labels,
            report.no_punct.arcs) == (7, 6, 5, 4)
    assert report.uas == pytest.approx(7 / 9)
    assert report.las == pytest.approx(5 / 9)
    assert report.label_accuracy == pytest.approx(7 / 9)
    assert report.no_punct.las == pytest.approx(4 / 7)
    assert format_report(report) == EXPECTED


def test_gold_against_itself_is_perfect():
    report = evaluate_sentences(read_conllu_string(GOLD), read_conllu_string(GOLD))
    assert report.uas == report.las == report.label_accuracy == 1.0


def test_missing_predicted_head_counts_as_wrong():
    gold = read_conllu_string(block(("Hi", "INTJ", 0, "root"), ("!", "PUNCT", 1, "punct")))
    pred = read_conllu_string(block(("Hi", "INTJ", "_", "root"), ("!", "PUNCT", 1, "punct")))
    report = evaluate_sentences(gold, pred)
    assert (report.all.heads, report.all.arcs, report.all.labels) == (1, 1, 2)
    assert report.no_punct.words == 1 and report.no_punct.heads == 0


def test_only_punctuation_prints_n_a():
    gold = read_conllu_string(block(("!", "PUNCT", 0, "root")))
    out = format_report(evaluate_sentences(gold, gold))
    assert "UAS n/a  LAS n/a  LA n/a  (punctuation excluded, 0 words)" in out


def test_multiword_tokens_and_empty_nodes_are_not_scored():
    words = (("Do", "AUX", 2, "aux"), ("n't", "VERB", 0, "root"))
    mwt = "1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
    empty = "2.1\tdo\t_\tVERB\t_\t_\t_\t_\t2:conj\t_\n"
    gold_text = mwt + block(*words, comment=None).replace("\n\n", "\n" + empty + "\n")
    gold = read_conllu_string(gold_text)
    pred = read_conllu_string(block(*words))
    assert evaluate_sentences(gold, pred).all.words == 2


def test_invalid_gold_tree_raises():
    gold = read_conllu_string(block(("a", "X", 0, "root"), ("b", "X", 0, "root")))
    with pytest.raises(TreeError, match="2 words are attached to the root"):
        evaluate_sentences(gold, gold)


@pytest.mark.parametrize(
    "pred_text, fragment",
    [
        (block(("The", "DET", 2, "det"), ("cat", "NOUN", 0, "root")) + PRED.split("\n\n", 1)[1],
         "sentence 1: gold has 4 words (gold.conllu:1), prediction has 2 words (pred.conllu:1)"),
        (PRED.replace("\tloudly\t", "\tloud\t"),
         "sentence 2, word 3: FORM differs: gold 'loudly' (gold.conllu:10), "
         "prediction 'loud' (pred.conllu:8)"),
        (PRED.split("\n\n", 1)[0] + "\n\n",
         "gold has 2 sentences, prediction has 1; first difference: "
         "sentence 2 of gold (gold.conllu:7) has no counterpart"),
        (PRED + block(("Extra", "X", 0, "root")),
         "gold has 2 sentences, prediction has 3; first difference: "
         "sentence 3 of prediction (pred.conllu:12) has no counterpart"),
    ],
)
def test_misalignment_raises(pred_text, fragment):
    gold = read_conllu_string(GOLD, path_name="gold.conllu")
    pred = read_conllu_string(pred_text, path_name="pred.conllu")
    with pytest.raises(AlignmentError) as info:
        evaluate_sentences(gold, pred)
    assert fragment in str(info.value)


def test_evaluate_files(tmp_path):
    (tmp_path / "gold.conllu").write_text(GOLD, encoding="utf-8")
    (tmp_path / "pred.conllu").write_text(PRED, encoding="utf-8")
    report = evaluate_files(tmp_path / "gold.conllu", tmp_path / "pred.conllu")
    assert format_report(report) == EXPECTED


# --- the command line ---------------------------------------------------------------


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *map(str, args)],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )


@pytest.fixture
def files(tmp_path):
    def write(name, text):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path
    return write


def test_cli_prints_figures(files):
    proc = run_cli("evaluate", files("gold.conllu", GOLD), files("pred.conllu", PRED))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == EXPECTED


@pytest.mark.parametrize(
    "pred_text, fragment",
    [
        (PRED.replace("\tloudly\t", "\tloud\t"), "FORM differs: gold 'loudly'"),
        (PRED.split("\n\n", 1)[0] + "\n\n", "gold has 2 sentences, prediction has 1"),
        (PRED.replace("\t4\tadvmod", "\tx\tadvmod"),
         "pred.conllu:8: HEAD 'x' is not an integer [E003]"),
    ],
)
def test_cli_error_exits_2_with_message_not_traceback(files, pred_text, fragment):
    proc = run_cli("evaluate", files("gold.conllu", GOLD), files("pred.conllu", pred_text))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("deptree: error: ")
    assert fragment in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_missing_file_exits_2(files, tmp_path):
    proc = run_cli("evaluate", files("gold.conllu", GOLD), tmp_path / "missing.conllu")
    assert proc.returncode == 2
    assert "missing.conllu: cannot read file" in proc.stderr
    assert "Traceback" not in proc.stderr
