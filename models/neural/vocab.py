"""What the neural analyser reads and predicts, as id tables learnt from a treebank.

Words are looked up lowercased, in a vocabulary of the forms seen at least
`MIN_WORD_COUNT` times (rarer ones are unknown and lean on their characters, as
unseen ones must); characters keep their case. The outputs are the joint (UPOS,
XPOS) classes of the tagger, whole FEATS strings (UDPipe 2 predicts them so, Straka
2018) and the relations (DEPREL with subtypes). Ids 0 and 1 of words and characters
are "unknown" and "padding"; characters 2 and 3 mark a word's start and end.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

UNKNOWN, PAD, BOW, EOW = 0, 1, 2, 3
MIN_WORD_COUNT = 2
MAX_CHARS = 20           # longer words keep their first 8 and last 12 characters


@dataclass(frozen=True)
class Vocab:
    """words: lowercase forms (id = position + 2); chars: characters (id = position + 4);
    classes: (UPOS, XPOS) pairs; feats: FEATS strings; labels: relations."""

    words: tuple[str, ...]
    chars: tuple[str, ...]
    classes: tuple[tuple[str, str], ...]
    feats: tuple[str, ...]
    labels: tuple[str, ...]

    @classmethod
    def build(cls, sentences: Sequence[Sequence[tuple[str, str, str, str, str]]],
              classes: Sequence[tuple[str, str]] | None = None) -> Vocab:
        """From sentences of (form, upos, xpos, feats, deprel) words; `classes` fixes the
        tag classes and their order (a linear tagger's, to be added to its scores)."""
        words, chars, tags, feats, labels = Counter(), Counter(), Counter(), Counter(), Counter()
        for s in sentences:
            for form, upos, xpos, fs, rel in s:
                words[form.lower()] += 1
                chars.update(form)
                tags[(upos, xpos)] += 1
                feats[fs] += 1
                labels[rel] += 1
        if classes is None:
            classes = [c for c, _ in tags.most_common()]
        return cls(words=tuple(sorted(w for w, n in words.items() if n >= MIN_WORD_COUNT)),
                   chars=tuple(sorted(chars)),
                   classes=tuple(tuple(c) for c in classes),
                   feats=tuple(f for f, _ in feats.most_common()),
                   labels=tuple(sorted(labels)))

    def to_json(self) -> dict:
        return {"words": list(self.words), "chars": "".join(self.chars),
                "classes": [list(c) for c in self.classes], "feats": list(self.feats),
                "labels": list(self.labels)}

    @classmethod
    def from_json(cls, d: dict) -> Vocab:
        return cls(tuple(d["words"]), tuple(d["chars"]),
                   tuple(tuple(c) for c in d["classes"]), tuple(d["feats"]),
                   tuple(d["labels"]))


class Lookup:
    """String -> id maps of a `Vocab`, for encoding words."""

    def __init__(self, vocab: Vocab):
        self.vocab = vocab
        self.word = {w: i + 2 for i, w in enumerate(vocab.words)}
        self.char = {c: i + 4 for i, c in enumerate(vocab.chars)}
        self.cls = {c: i for i, c in enumerate(vocab.classes)}
        self.feats = {f: i for i, f in enumerate(vocab.feats)}
        self.label = {r: i for i, r in enumerate(vocab.labels)}

    def word_id(self, form: str) -> int:
        return self.word.get(form.lower(), UNKNOWN)

    def char_ids(self, form: str) -> np.ndarray:
        """int32 [MAX_CHARS + 2]: BOW, the characters, EOW, then padding."""
        if len(form) > MAX_CHARS:
            form = form[:8] + form[-(MAX_CHARS - 8):]
        out = np.full(MAX_CHARS + 2, PAD, np.int32)
        out[0] = BOW
        get = self.char.get
        for i, ch in enumerate(form, 1):
            out[i] = get(ch, UNKNOWN)
        out[len(form) + 1] = EOW
        return out
