"""Attachment scores of a predicted CoNLL-U file against gold (CoNLL 2018 `conll18_ud_eval`).

Scores are over syntactic words (integer IDs), as in the CoNLL 2018 script; multiword
tokens and empty nodes are ignored. UAS counts words whose HEAD is right, LAS words
whose HEAD and full DEPREL ("obl:tmod", not "obl") are right, LA words whose DEPREL is
right. The "punctuation excluded" figures drop words whose *gold* UPOS is PUNCT (CoNLL-X
dropped tokens by their FORM instead). Unlike the CoNLL 2018 script, both files must
hold the same sentences with the same words: tokenisation is not scored here, so a
mismatch is an AlignmentError rather than an alignment of differing tokens.
"""
from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass

from models.conllu import Sentence, read_conllu, validate_tree
from models.errors import AlignmentError, Errors, where

logger = logging.getLogger(__name__)

PUNCT = "PUNCT"


@dataclass(frozen=True, slots=True)
class Counts:
    """Numbers of words, and of words with right head / label / both."""

    words: int = 0
    heads: int = 0
    labels: int = 0
    arcs: int = 0

    @property
    def uas(self) -> float:
        return self.heads / self.words if self.words else 0.0

    @property
    def las(self) -> float:
        return self.arcs / self.words if self.words else 0.0

    @property
    def la(self) -> float:
        return self.labels / self.words if self.words else 0.0


@dataclass(frozen=True, slots=True)
class EvalReport:
    """Scores as fractions in [0, 1] (0.0 when there is nothing to score)."""

    sentences: int
    all: Counts
    no_punct: Counts

    @property
    def words(self) -> int:
        return self.all.words

    @property
    def uas(self) -> float:
        return self.all.uas

    @property
    def las(self) -> float:
        return self.all.las

    @property
    def label_accuracy(self) -> float:
        return self.all.la


def _where(sent: Sentence, word: int | None = None) -> str:
    if sent.start_line < 1:
        return "not from a file"
    return where(sent.path, sent.start_line if word is None else sent.line_no(word))


def _first_difference(gold: Sequence[Sentence], pred: Sequence[Sentence]) -> str | None:
    """Message for the first sentence whose word count or FORMs differ, or None."""
    for k, (g, p) in enumerate(zip(gold, pred, strict=False), 1):
        if len(g.words) != len(p.words):
            return Errors.E041.format(
                sent=k, n_gold=len(g.words), n_pred=len(p.words),
                gold_where=_where(g), pred_where=_where(p),
            )
        for i, (gw, pw) in enumerate(zip(g.words, p.words, strict=True), 1):
            if gw.form != pw.form:
                return Errors.E042.format(
                    sent=k, word=i, gold_form=gw.form, pred_form=pw.form,
                    gold_where=_where(g, i), pred_where=_where(p, i),
                )
    if len(gold) != len(pred):
        k = min(len(gold), len(pred))
        which, extra = ("gold", gold[k]) if len(gold) > k else ("prediction", pred[k])
        return Errors.E043.format(sent=k + 1, which=which, where=_where(extra))
    return None


def check_alignment(gold: Sequence[Sentence], pred: Sequence[Sentence]) -> None:
    """Raise AlignmentError unless both hold the same number of sentences, words and FORMs."""
    first = _first_difference(gold, pred)
    if first is None:
        return
    if len(gold) != len(pred):
        first = first.rsplit(" [E", 1)[0]  # one code per message: the count mismatch
        raise AlignmentError(Errors.E040.format(n_gold=len(gold), n_pred=len(pred), first=first))
    raise AlignmentError(first)


def evaluate_sentences(
    gold: Sequence[Sentence], pred: Sequence[Sentence], *, validate: bool = True
) -> EvalReport:
    """Score `pred` against `gold`; with `validate`, each gold tree must be a tree (TreeError)."""
    check_alignment(gold, pred)
    totals = [0] * 8  # words, heads, labels, arcs; then the same without punctuation
    for g, p in zip(gold, pred, strict=True):
        if validate:
            validate_tree(g)
        for gw, pw in zip(g.words, p.words, strict=True):
            head_ok = gw.head is not None and gw.head == pw.head
            label_ok = gw.deprel == pw.deprel
            row = (1, head_ok, label_ok, head_ok and label_ok)
            for j, v in enumerate(row):
                totals[j] += v
            if gw.upos != PUNCT:
                for j, v in enumerate(row):
                    totals[4 + j] += v
    return EvalReport(len(gold), Counts(*totals[:4]), Counts(*totals[4:]))


def evaluate_files(
    gold_path: str | os.PathLike[str], pred_path: str | os.PathLike[str]
) -> EvalReport:
    """Read both CoNLL-U files, check gold trees and alignment, and score."""
    gold = list(read_conllu(gold_path))
    pred = list(read_conllu(pred_path))
    report = evaluate_sentences(gold, pred)
    logger.debug("evaluated %s against %s: %s", pred_path, gold_path, report)
    return report


def _pct(correct: int, total: int) -> str:
    return f"{100 * correct / total:.2f}" if total else "n/a"


def format_report(report: EvalReport) -> str:
    """Percentages with 2 decimals, one line per word set, ending in a newline."""
    lines = [f"words {report.all.words} sentences {report.sentences}"]
    for counts, label in (
        (report.all, "(all words)"),
        (report.no_punct, f"(punctuation excluded, {report.no_punct.words} words)"),
    ):
        lines.append(
            f"UAS {_pct(counts.heads, counts.words)}  LAS {_pct(counts.arcs, counts.words)}"
            f"  LA {_pct(counts.labels, counts.words)}  {label}"
        )
    return "\n".join(lines) + "\n"
