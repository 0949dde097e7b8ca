"""Gold and predicted words aligned on their characters, as the CoNLL 2018 scorer aligns them.

Both files are laid out on one character string: the FORMs of their tokens (a
multiword token's FORM, or a plain word's), concatenated with every Unicode space
(category Zs) removed. The strings must be equal; each token, sentence and word is a
span of it. Words outside multiword tokens align when their spans are equal. Where a
multiword token stands in either file, the smallest stretch that no multiword token
crosses is found, and the words inside it are aligned by the longest common
subsequence of their lower-cased FORMs (Zeman et al. 2018, "CoNLL 2018 Shared Task",
section 2.3; `conll18_ud_eval.py`). Tie-breaks follow that script, so the figures match.
"""
from __future__ import annotations

import bisect
import logging
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from models.conllu import Sentence
from models.errors import AlignmentError, ConlluError, Errors, where

logger = logging.getLogger(__name__)

_RANGE = re.compile(r"([0-9]+)-([0-9]+)\Z")
SHOWN = 20  # characters quoted from each side where the texts differ


@dataclass(frozen=True, slots=True)
class WordSpan:
    """A syntactic word placed on the text: its token's span [start, end), whether that
    token is a multiword token, and its FORM (spaces removed unless inside one)."""

    start: int
    end: int
    multiword: bool
    form: str


@dataclass(slots=True)
class LaidOut:
    """A file's tokens, sentences and words as spans of `chars`; `words[k]` is the k-th
    syntactic word of the file, `places[t]` the file:line of token t."""

    chars: str
    tokens: list[tuple[int, int]]
    sentences: list[tuple[int, int]]
    words: list[WordSpan]
    places: list[str]


def _no_spaces(text: str) -> str:
    return "".join(c for c in text if unicodedata.category(c) != "Zs")


def _place(sent: Sentence, offset: int) -> str:
    return where(sent.path, sent.start_line + offset if sent.start_line > 0 else None)


def lay_out(sentences: Sequence[Sentence]) -> LaidOut:
    """Tokens, sentences and words of `sentences` as spans of their spaceless text.

    Empty nodes are skipped. Raises ConlluError for a token whose FORM is only spaces.
    """
    out = LaidOut("", [], [], [], [])
    parts: list[str] = []
    n = 0
    for sent in sentences:
        first = n
        mwt_end, mwt_span = 0, (0, 0)  # last word ID and span of the open multiword token
        for offset, item in enumerate(sent.lines):
            if isinstance(item, str):
                if item.startswith("#"):
                    continue
                m = _RANGE.match(item.split("\t", 1)[0])
                if m is None:  # an empty node
                    continue
                form = item.split("\t", 2)[1]
                mwt_end = int(m.group(2))
            else:
                word = sent.words[item]
                if word.id <= mwt_end:
                    out.words.append(WordSpan(*mwt_span, True, word.form))
                    continue
                form = word.form
            text = _no_spaces(form)
            if not text:
                raise ConlluError(sent.path, sent.start_line + offset if sent.start_line > 0
                                  else None, Errors.E045.format(form=form))
            span = (n, n + len(text))
            parts.append(text)
            n += len(text)
            out.tokens.append(span)
            out.places.append(_place(sent, offset))
            if isinstance(item, str):
                mwt_span = span
            else:
                out.words.append(WordSpan(*span, False, text))
        out.sentences.append((first, n))
    out.chars = "".join(parts)
    return out


def _place_of(doc: LaidOut, index: int) -> str:
    if index >= len(doc.chars):
        return "end of file"
    return doc.places[bisect.bisect_right(doc.tokens, (index, len(doc.chars) + 1)) - 1]


def check_same_text(gold: LaidOut, pred: LaidOut) -> None:
    """Raise AlignmentError, quoting both sides and their lines, unless the spaceless
    texts are equal."""
    if gold.chars == pred.chars:
        return
    i = 0
    for a, b in zip(gold.chars, pred.chars, strict=False):
        if a != b:
            break
        i += 1
    raise AlignmentError(Errors.E044.format(
        index=i, gold=gold.chars[i:i + SHOWN], gold_where=_place_of(gold, i),
        pred=pred.chars[i:i + SHOWN], pred_where=_place_of(pred, i)))


def _inside(words: Sequence[WordSpan], k: int, end: int) -> bool:
    """Whether word k still belongs to a multiword stretch that ends at `end`: a
    multiword token's word if it starts before `end`, any other word if it ends by it."""
    if k >= len(words):
        return False
    w = words[k]
    return w.start < end if w.multiword else w.end <= end


def _multiword_stretch(
    gold: Sequence[WordSpan], pred: Sequence[WordSpan], i: int, j: int
) -> tuple[int, int, int, int]:
    """(gold start, pred start, gold end, pred end) word indices of the smallest stretch
    from gold word i and pred word j (one of them in a multiword token) that no
    multiword token of either file crosses."""
    if gold[i].multiword:
        end = gold[i].end
        if not pred[j].multiword and pred[j].start < gold[i].start:
            j += 1
    else:
        end = pred[j].end
        if not gold[i].multiword and gold[i].start < pred[j].start:
            i += 1
    gi, pj = i, j
    while _inside(gold, i, end) or _inside(pred, j, end):
        if i < len(gold) and (j >= len(pred) or gold[i].start <= pred[j].start):
            w, i = gold[i], i + 1
        else:
            w, j = pred[j], j + 1
        if w.multiword:
            end = max(end, w.end)
    return gi, pj, i, j


def _lcs_pairs(gold: Sequence[str], pred: Sequence[str]) -> list[tuple[int, int]]:
    """Index pairs of a longest common subsequence of two FORM lists; on ties the gold
    word is skipped first (the scorer's order)."""
    n, m = len(gold), len(pred)
    # best[a][b]: length of an LCS of gold[a:] and pred[b:]
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for a in range(n - 1, -1, -1):
        row, below = best[a], best[a + 1]
        for b in range(m - 1, -1, -1):
            row[b] = below[b + 1] + 1 if gold[a] == pred[b] else max(below[b], row[b + 1])
    pairs = []
    a = b = 0
    while a < n and b < m:
        if gold[a] == pred[b]:
            pairs.append((a, b))
            a, b = a + 1, b + 1
        elif best[a][b] == best[a + 1][b]:
            a += 1
        else:
            b += 1
    return pairs


def align_words(gold: Sequence[WordSpan], pred: Sequence[WordSpan]) -> list[tuple[int, int]]:
    """(gold index, pred index) of every aligned word pair, in order. The words must lie
    on the same text (`check_same_text`)."""
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < len(gold) and j < len(pred):
        g, p = gold[i], pred[j]
        if g.multiword or p.multiword:
            gi, pj, i, j = _multiword_stretch(gold, pred, i, j)
            found = _lcs_pairs([w.form.lower() for w in gold[gi:i]],
                               [w.form.lower() for w in pred[pj:j]])
            pairs.extend((gi + a, pj + b) for a, b in found)
        elif (g.start, g.end) == (p.start, p.end):
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif g.start <= p.start:
            i += 1
        else:
            j += 1
    return pairs
