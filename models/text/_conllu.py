"""Front-end view of CoNLL-U sentences, read with `models.conllu.read_conllu`.

`models.conllu` keeps multiword-token lines and comments as raw strings (for a
byte-identical round trip); the front-end needs them parsed: the `# text` line,
document/paragraph marks and the surface tokens (multiword ranges,
SpaceAfter=No) that define the gold tokenization. Empty nodes are skipped.
"""
from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field

from models import conllu

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

    def token_spans(self) -> list[tuple[int, int]] | None:
        """Character spans of the surface tokens in `text` (None if they do not align)."""
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
            spans.append((pos, pos + len(tok.form)))
            pos += len(tok.form)
        return spans

    def word_spans(self) -> list[tuple[int, int]] | None:
        """Character spans of the words in `text` (None if they do not align).

        Words of a multiword token split its span by their lengths when they
        concatenate to the surface form (EWT: "do"+"n't"); otherwise every word
        gets the whole token span.
        """
        token_spans = self.token_spans()
        if token_spans is None:
            return None
        spans: list[tuple[int, int]] = []
        for tok, (start, end) in zip(self.tokens, token_spans):
            words = self.words[tok.first:tok.last + 1]
            if len(words) > 1 and "".join(w.form for w in words).lower() == tok.form.lower():
                p = start
                for w in words:
                    spans.append((p, p + len(w.form)))
                    p += len(w.form)
            else:
                spans.extend((start, end) for _ in words)
        return spans


def _space_after(misc: str) -> bool:
    return "SpaceAfter=No" not in misc.split("|")


def _front_end_view(src: conllu.Sentence) -> Sentence:
    sent = Sentence(text=src.text)
    pending: tuple[int, int, str, bool] | None = None  # open multiword range
    for line in src.lines:
        if isinstance(line, str):
            if line.startswith("# newdoc"):
                sent.newdoc = True
            elif line.startswith("# newpar"):
                sent.newpar = True
            elif not line.startswith("#"):
                cols = line.split("\t")
                if "-" in cols[0]:
                    a, b = (int(x) for x in cols[0].split("-"))
                    pending = (a, b, cols[1], _space_after(cols[9]))
            continue
        w = src.words[line]
        sent.words.append(Word(w.form, w.lemma, w.upos, w.xpos, w.feats))
        n = len(sent.words) - 1
        if pending is not None and pending[0] <= w.id <= pending[1]:
            if w.id == pending[1]:
                a, b, form, space = pending
                sent.tokens.append(SurfaceToken(form, n - (b - a), n, space))
                pending = None
        else:
            sent.tokens.append(SurfaceToken(w.form, n, n, _space_after(w.misc)))
    if sent.text is None:     # no `# text` line: the text is its tokens and their spaces
        sent.text = "".join(t.form + " " * t.space_after for t in sent.tokens).rstrip(" ")
    return sent


def iter_conllu(path: str) -> Iterator[Sentence]:
    """Yield front-end views of the sentences of a CoNLL-U file; a sentence without a
    `# text` line (required since UD 2, missing from some files) gets the text its
    tokens and SpaceAfter=No define, so the tokenizer and splitter still learn."""
    rebuilt = 0
    for src in conllu.read_conllu(path):
        if src.words:
            rebuilt += src.text is None
            yield _front_end_view(src)
    if rebuilt:
        logger.warning("%s: %d sentence(s) without a `# text` line; their text is rebuilt"
                       " from the tokens and SpaceAfter=No", path, rebuilt)


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
