"""What a parse returns: the tokens of one sentence with their analysis, and the tree.

`assemble` puts a sentence's words, tags, lemmas, FEATS and tree together. FEATS come
from the neural analyser when it ran, which reads the whole sentence; else from the
front-end's FEATS guesser, which sees a word and its left neighbour only, so finite
verbs then take Person and Number from their parsed subject (`agreement.py`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from models.text.agreement import agree_with_subjects


@dataclass
class ParsedToken:
    id: int
    form: str
    lemma: str
    upos: str
    xpos: str
    head: int
    deprel: str
    start: int | None = None   # character offsets into the input text (raw input only)
    end: int | None = None
    feats: str = "_"
    space_after: bool | None = None   # whitespace follows its token (raw input only)


@dataclass
class MultiwordToken:
    """A surface token of several words (ids first..last, 1-based): "don't" = "do" "n't"."""

    first: int
    last: int
    form: str
    start: int
    end: int


@dataclass
class ParsedTree:
    tokens: list[ParsedToken]
    score: float
    stats: dict[str, Any] = field(default_factory=dict)
    multiword: list[MultiwordToken] = field(default_factory=list)


def mark_tokens(tree: ParsedTree, words: Sequence, text: str) -> ParsedTree:
    """Carry the tokenizer's words (`text.tokenizer.Token`) of raw text into a tree of
    them: whether a space follows each, and the multiword tokens they make up."""
    for tok, w in zip(tree.tokens, words):
        tok.space_after = w.space_after
    i = 0
    while i < len(words):
        span = words[i].mwt
        j = i
        while span is not None and j + 1 < len(words) and words[j + 1].mwt == span:
            j += 1
        if j > i:
            tree.multiword.append(MultiwordToken(i + 1, j + 1, text[span[0]:span[1]],
                                                 span[0], span[1]))
        i = j + 1
    return tree


def assemble(forms: Sequence[str], upos: Sequence[str], xpos: Sequence[str],
             lemmas: Sequence[str] | None, heads: Sequence[int], deprels: Sequence[str],
             feats: Sequence[str] | None, offsets: Sequence[tuple[int, int]] | None,
             score: float, stats: dict[str, Any], agree: bool = False) -> ParsedTree:
    """The tokens of a parsed sentence; feats None: "_" for every word; agree: make
    finite verbs agree with their subjects (guessed FEATS)."""
    if feats is not None and agree:
        feats = agree_with_subjects(list(feats), heads, deprels, forms, lemmas, xpos)
    toks = []
    for i, f in enumerate(forms):
        start, end = offsets[i] if offsets else (None, None)
        toks.append(ParsedToken(i + 1, f, lemmas[i] if lemmas else "_", upos[i], xpos[i],
                                int(heads[i]), deprels[i], start, end,
                                feats[i] if feats is not None else "_"))
    return ParsedTree(toks, float(score), stats)
