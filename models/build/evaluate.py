"""A predicted CoNLL-U file scored against gold the way the CoNLL 2018 scorer scores it.

Same metrics and figures as `conll18_ud_eval.py` (Zeman et al. 2018, section 2.3):
Tokens, Sentences and Words compare spans of the spaceless text, so a prediction
from raw text (other tokens, sentence splits, multiword tokens) is scored too
(`models.build.word_alignment`). Tag, lemma and tree metrics count over aligned words:
UFeats keeps only the universal features, LAS compares the universal part of DEPREL
("obl" for "obl:tmod"), CLAS, MLAS and BLEX count only words with a content
relation; MLAS also wants UPOS, UFeats and the functional children (aux, cop, mark,
det, clf, case, cc: relation, UPOS, UFeats) right, BLEX the lemma. A gold LEMMA "_"
matches any lemma.

Where the official script refuses a prediction that is not a tree (HEAD "_", two roots,
a cycle), this scores it word by word (HEAD "_" is never right). Gold must be a tree
(TreeError) unless `validate=False`.
"""
from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from models.build.word_alignment import align_words, check_same_text, lay_out
from models.conllu import Sentence, read_conllu, read_conllu_string, validate_tree

logger = logging.getLogger(__name__)

METRICS = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas",
           "UAS", "LAS", "CLAS", "MLAS", "BLEX")
CONTENT_DEPRELS = frozenset((
    "nsubj", "obj", "iobj", "csubj", "ccomp", "xcomp", "obl", "vocative", "expl",
    "dislocated", "advcl", "advmod", "discourse", "nmod", "appos", "nummod", "acl", "amod",
    "conj", "fixed", "flat", "compound", "list", "parataxis", "orphan", "goeswith",
    "reparandum", "root", "dep"))
FUNCTIONAL_DEPRELS = frozenset(("aux", "cop", "mark", "det", "clf", "case", "cc"))
# the universal features of UD 2.2, as the CoNLL 2018 scorer lists them
UNIVERSAL_FEATURES = frozenset((
    "PronType", "NumType", "Poss", "Reflex", "Foreign", "Abbr", "Gender", "Animacy",
    "Number", "Case", "Definite", "Degree", "VerbForm", "Mood", "Tense", "Aspect", "Voice",
    "Evident", "Polarity", "Person", "Polite"))

ROOT, NO_GOLD_HEAD, NO_PRED_HEAD, UNALIGNED = -1, -2, -3, -4


@dataclass(frozen=True, slots=True)
class Score:
    """Counts of one metric: right, in gold, in the prediction, and aligned gold words
    considered (None for Tokens, Sentences and Words, which have no aligned accuracy)."""

    correct: int
    gold: int
    system: int
    aligned: int | None = None

    @property
    def precision(self) -> float:
        return self.correct / self.system if self.system else 0.0

    @property
    def recall(self) -> float:
        return self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        total = self.gold + self.system
        return 2 * self.correct / total if total else 0.0

    @property
    def aligned_accuracy(self) -> float | None:
        if self.aligned is None:
            return None
        return self.correct / self.aligned if self.aligned else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1,
                "aligned_accuracy": self.aligned_accuracy, "correct": self.correct,
                "gold": self.gold, "system": self.system, "aligned": self.aligned}


@dataclass(frozen=True, slots=True)
class EvalReport:
    """Every metric's Score (keys: METRICS), and the gold file's sentence and word counts."""

    scores: dict[str, Score]
    sentences: int
    words: int

    @property
    def uas(self) -> float:
        """UAS F1 (equal to the accuracy when both files have the same words)."""
        return self.scores["UAS"].f1

    @property
    def las(self) -> float:
        """LAS F1, DEPREL compared without its subtype."""
        return self.scores["LAS"].f1

    def as_dict(self) -> dict[str, dict[str, Any]]:
        return {name: self.scores[name].as_dict() for name in METRICS}


@dataclass(slots=True)
class _Words:
    """The columns the metrics compare, one entry per word of a file (file order):
    `parent` is a word index, ROOT, or NO_*_HEAD for HEAD "_"."""

    upos: list[str]
    xpos: list[str]
    feats: list[str]
    lemma: list[str]
    deprel: list[str]
    parent: list[int]
    children: list[list[int]]  # functional children, in word order


def _universal_feats(feats: str) -> str:
    kept = (f for f in feats.split("|") if f.split("=", 1)[0] in UNIVERSAL_FEATURES)
    return "|".join(sorted(kept))


def _words(sentences: Sequence[Sentence], no_head: int) -> _Words:
    out = _Words([], [], [], [], [], [], [])
    for sent in sentences:
        first = len(out.parent)
        for w in sent.words:
            out.upos.append(w.upos)
            out.xpos.append(w.xpos)
            out.feats.append(_universal_feats(w.feats))
            out.lemma.append(w.lemma)
            out.deprel.append(w.deprel.split(":", 1)[0])
            out.parent.append(no_head if w.head is None else
                              ROOT if w.head == 0 else first + w.head - 1)
            out.children.append([])
        for k in range(first, len(out.parent)):
            if out.parent[k] >= 0 and out.deprel[k] in FUNCTIONAL_DEPRELS:
                out.children[out.parent[k]].append(k)
    return out


def _spans_score(gold: list[tuple[int, int]], pred: list[tuple[int, int]]) -> Score:
    return Score(len(set(gold) & set(pred)), len(gold), len(pred))


def evaluate_sentences(
    gold: Sequence[Sentence], pred: Sequence[Sentence], *, validate: bool = True
) -> EvalReport:
    """Score `pred` against `gold`. AlignmentError if their texts differ (spaces
    ignored); with `validate`, TreeError unless every gold sentence is a tree."""
    if validate:
        for sent in gold:
            validate_tree(sent)
    g_doc, p_doc = lay_out(gold), lay_out(pred)
    check_same_text(g_doc, p_doc)
    pairs = align_words(g_doc.words, p_doc.words)
    g, p = _words(gold, NO_GOLD_HEAD), _words(pred, NO_PRED_HEAD)
    to_gold = {j: i for i, j in pairs}

    def head(k: int) -> int:  # a predicted word's parent as a gold word index
        h = p.parent[k]
        return h if h < 0 else to_gold.get(h, UNALIGNED)

    def mlas_children(words: _Words, k: int, to: Any) -> list[tuple]:
        return [(to(c), words.deprel[c], words.upos[c], words.feats[c])
                for c in words.children[k]]

    content_g = [d in CONTENT_DEPRELS for d in g.deprel]
    n_content_p = sum(d in CONTENT_DEPRELS for d in p.deprel)
    counts = dict.fromkeys(METRICS[3:], 0)
    n_aligned_content = 0
    for i, j in pairs:
        lemma = g.lemma[i] == "_" or g.lemma[i] == p.lemma[j]
        upos = g.upos[i] == p.upos[j]
        xpos = g.xpos[i] == p.xpos[j]
        feats = g.feats[i] == p.feats[j]
        uas = g.parent[i] == head(j)
        las = uas and g.deprel[i] == p.deprel[j]
        for name, ok in (("UPOS", upos), ("XPOS", xpos), ("UFeats", feats),
                         ("AllTags", upos and xpos and feats), ("Lemmas", lemma),
                         ("UAS", uas), ("LAS", las)):
            counts[name] += ok
        if content_g[i]:
            n_aligned_content += 1
            counts["CLAS"] += las
            counts["BLEX"] += las and lemma
            counts["MLAS"] += (las and upos and feats and mlas_children(g, i, lambda c: c)
                               == mlas_children(p, j, lambda c: to_gold.get(c, UNALIGNED)))
    n_g, n_p = len(g.parent), len(p.parent)
    scores = {"Tokens": _spans_score(g_doc.tokens, p_doc.tokens),
              "Sentences": _spans_score(g_doc.sentences, p_doc.sentences),
              "Words": Score(len(pairs), n_g, n_p)}
    for name in METRICS[3:]:
        if name in ("CLAS", "MLAS", "BLEX"):
            scores[name] = Score(counts[name], sum(content_g), n_content_p, n_aligned_content)
        else:
            scores[name] = Score(counts[name], n_g, n_p, len(pairs))
    return EvalReport(scores, len(gold), n_g)


def evaluate_files(
    gold_path: str | os.PathLike[str], pred_path: str | os.PathLike[str]
) -> EvalReport:
    """Read both CoNLL-U files and score the prediction (see `evaluate_sentences`)."""
    report = evaluate_sentences(list(read_conllu(gold_path)), list(read_conllu(pred_path)))
    logger.debug("evaluated %s against %s: LAS F1 %.4f", pred_path, gold_path, report.las)
    return report


def evaluate_texts(gold: str, pred: str) -> EvalReport:
    """Score CoNLL-U text `pred` against CoNLL-U text `gold`."""
    return evaluate_sentences(read_conllu_string(gold, path_name="<gold>"),
                              read_conllu_string(pred, path_name="<prediction>"))


def score_files(
    gold_path: str | os.PathLike[str], pred_path: str | os.PathLike[str]
) -> dict[str, dict[str, Any]]:
    """The CoNLL 2018 metrics of a predicted CoNLL-U file against a gold one, as a dict.

    Keys are METRICS ("Tokens", ..., "UAS", "LAS", "CLAS", "MLAS", "BLEX"); each value
    holds `precision`, `recall`, `f1` and `aligned_accuracy` as fractions in [0, 1]
    (`aligned_accuracy` is None for Tokens, Sentences and Words), and the counts
    `correct`, `gold`, `system`, `aligned`. E.g. `score_files(g, p)["LAS"]["f1"]`.
    Raises ConlluError, TreeError (gold not a tree) or AlignmentError (other text).
    """
    return evaluate_files(gold_path, pred_path).as_dict()


def score_texts(gold: str, pred: str) -> dict[str, dict[str, Any]]:
    """`score_files` for two CoNLL-U texts instead of two paths."""
    return evaluate_texts(gold, pred).as_dict()


def format_report(report: EvalReport, *, counts: bool = False) -> str:
    """The table `conll18_ud_eval.py -v` prints (percentages, 2 decimals), or with
    `counts` the one `-c` prints; ends with a newline."""
    if counts:
        lines = ["Metric     | Correct   |      Gold | Predicted | Aligned"]
    else:
        lines = ["Metric     | Precision |    Recall |  F1 Score | AligndAcc"]
    lines.append("-----------+-----------+-----------+-----------+-----------")
    for name in METRICS:
        s = report.scores[name]
        if counts:
            aligned = s.aligned or (s.correct if name == "Words" else "")
            lines.append(f"{name:11}|{s.correct:10} |{s.gold:10} |{s.system:10} |{aligned:10}")
        else:
            acc = s.aligned_accuracy
            lines.append(f"{name:11}|{100 * s.precision:10.2f} |{100 * s.recall:10.2f} |"
                         f"{100 * s.f1:10.2f} |" + ("" if acc is None else f"{100 * acc:10.2f}"))
    return "\n".join(lines) + "\n"


def format_json(report: EvalReport) -> str:
    """`EvalReport.as_dict` as indented JSON, ending with a newline."""
    return json.dumps(report.as_dict(), indent=2) + "\n"
