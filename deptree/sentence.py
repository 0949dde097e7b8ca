"""A parsed sentence as a Python value: its words with heads, relations, tags and
confidences, its multiword tokens, and `to_conllu()`.

The same type comes back from a model loaded in this process (`deptree.load`) and from
a running service (`deptree.Client`): both build it from a tree in the shape the
workers reply and POST /parse returns (`worker/protocol.py`), so a program can move
from one to the other without a change.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from models.conllu import format_sentence
from models.tree_conllu import tree_sentence, trees_conllu


@dataclass(frozen=True)
class Word:
    """One syntactic word. `head` is the id of its head (0: the root); `confidence`
    the decoder's probability of that arc when the request asked for it, else None;
    `start`, `end` (character offsets) and `space_after` only from raw text."""

    id: int
    form: str
    lemma: str
    upos: str
    xpos: str
    feats: str
    head: int
    deprel: str
    confidence: float | None = None
    start: int | None = None
    end: int | None = None
    space_after: bool | None = None


@dataclass(frozen=True)
class MultiwordToken:
    """A surface token of several words, ids first..last: "don't" = "do" + "n't"."""

    first: int
    last: int
    form: str
    start: int
    end: int


@dataclass(frozen=True)
class Sentence:
    words: list[Word]
    multiword: list[MultiwordToken] = field(default_factory=list)
    score: float | None = None           # the tree's model score (None: not finite)
    stats: dict[str, Any] = field(default_factory=dict)   # what the decoder reports
    text: str | None = None               # the sentence's text, where the input had one

    @property
    def heads(self) -> list[int]:
        return [w.head for w in self.words]

    @property
    def deprels(self) -> list[str]:
        return [w.deprel for w in self.words]

    @classmethod
    def from_dict(cls, tree: Mapping[str, Any]) -> Sentence:
        """From a tree as the workers reply it and POST /parse answers it."""
        conf = (tree.get("stats") or {}).get("confidence")
        words = [Word(id=int(t["id"]), form=t["form"], lemma=t.get("lemma", "_"),
                      upos=t.get("upos", "_"), xpos=t.get("xpos", "_"),
                      feats=t.get("feats") or "_", head=int(t["head"]),
                      deprel=t.get("deprel", "_"),
                      confidence=float(conf[k]) if conf else None,
                      start=t.get("start"), end=t.get("end"), space_after=t.get("space_after"))
                 for k, t in enumerate(tree["tokens"])]
        multiword = [MultiwordToken(**m) for m in tree.get("multiword") or ()]
        return cls(words, multiword, tree.get("score"), dict(tree.get("stats") or {}),
                   tree.get("text"))

    def to_dict(self) -> dict[str, Any]:
        """The tree in the service's shape (what `from_dict` reads)."""
        tokens = [{k: v for k, v in asdict(w).items() if k != "confidence" and v is not None}
                  for w in self.words]
        return {"tokens": tokens, "multiword": [asdict(m) for m in self.multiword],
                "score": self.score, "stats": self.stats, "text": self.text}

    def to_conllu(self, sent_id: int | str = 1) -> str:
        """This sentence as CoNLL-U (the service's writer: multiword tokens,
        SpaceAfter=No, TokenRange, HeadConf where confidences were asked for)."""
        return format_sentence(tree_sentence(self.to_dict(), sent_id))


def to_conllu(sentences: list[Sentence]) -> str:
    """Several sentences as one CoNLL-U text, numbered from 1."""
    return trees_conllu([s.to_dict() for s in sentences])
