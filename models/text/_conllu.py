"""Minimal private CoNLL-U reader for the text front-end.

`models/conllu.py` is being written elsewhere; until it lands, the front-end
needs more than words anyway: the `# text` line, document/paragraph marks and
the surface tokens (multiword ranges, SpaceAfter=No) that define the gold
tokenization. Empty nodes (IDs with '.') are skipped.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Iterator

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Word:
    form: str
    lemma: str
    upos: str
    xpos: str
    feats: str


@dataclass(frozen=True)
class SurfaceToken:
    """One surface token covering words[first:last + 1]."""

    form: str
    first: int
    last: int
    space_after: bool


@dataclass
class Sentence:
    words: list[Word] = field(default_factory=list)
    tokens: list[SurfaceToken] = field(default_factory=list)
    text: str | None = None
    newdoc: bool = False
    newpar: bool = False

    def word_spans(self) -> list[tuple[int, int]] | None:
        """Character spans of the words in `text` (None if they do not align).

        Words of a multiword token split its span by their lengths when they
        concatenate to the surface form (EWT: "do"+"n't"); otherwise every word
        gets the whole token span.
        """
        if self.text is None:
            return None
        spans: list[tuple[int, int]] = []
        pos = 0
        text = self.text
        for tok in self.tokens:
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if text[pos:pos + len(tok.form)] != tok.form:
                return None
            start, end = pos, pos + len(tok.form)
            words = self.words[tok.first:tok.last + 1]
            if len(words) > 1 and "".join(w.form for w in words).lower() == tok.form.lower():
                p = start
                for w in words:
                    spans.append((p, p + len(w.form)))
                    p += len(w.form)
            else:
                spans.extend((start, end) for _ in words)
            pos = end
        return spans


def _read_misc_space_after(misc: str) -> bool:
    return "SpaceAfter=No" not in misc.split("|")


def iter_conllu(path: str) -> Iterator[Sentence]:
    """Yield sentences of a CoNLL-U file (10 tab-separated columns)."""
    sent = Sentence()
    pending: tuple[int, int, str, bool] | None = None  # multiword range
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not line:
                if sent.words:
                    yield sent
                sent, pending = Sentence(), None
                continue
            if line.startswith("#"):
                if line.startswith("# text = "):
                    sent.text = line[len("# text = "):]
                elif line.startswith("# newdoc"):
                    sent.newdoc = True
                elif line.startswith("# newpar"):
                    sent.newpar = True
                continue
            cols = line.split("\t")
            if len(cols) != 10:
                raise ValueError(f"{path}: expected 10 columns, got {len(cols)}: {line!r}")
            wid = cols[0]
            if "." in wid:
                continue
            if "-" in wid:
                a, b = (int(x) for x in wid.split("-"))
                pending = (a, b, cols[1], _read_misc_space_after(cols[9]))
                continue
            idx = int(wid)
            sent.words.append(Word(cols[1], cols[2], cols[3], cols[4], cols[5]))
            if pending is not None and pending[0] <= idx <= pending[1]:
                if idx == pending[1]:
                    a, b, form, space = pending
                    n = len(sent.words)
                    sent.tokens.append(SurfaceToken(form, n - 1 - (b - a), n - 1, space))
                    pending = None
            else:
                n = len(sent.words) - 1
                sent.tokens.append(SurfaceToken(cols[1], n, n, _read_misc_space_after(cols[9])))
    if sent.words:
        yield sent


def read_conllu(path: str) -> list[Sentence]:
    return list(iter_conllu(path))


def documents(sentences: list[Sentence]) -> list[list[list[Sentence]]]:
    """Group sentences into documents of paragraphs (`# newdoc`, `# newpar`)."""
    docs: list[list[list[Sentence]]] = []
    for s in sentences:
        if s.newdoc or not docs:
            docs.append([[]])
        elif s.newpar:
            docs[-1].append([])
        docs[-1][-1].append(s)
    return docs
