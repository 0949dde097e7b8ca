"""What the neural analyser reads and predicts, as id tables learnt from a treebank.

Words are looked up lowercased, in a vocabulary of the forms seen at least
`MIN_WORD_COUNT` times (rarer ones are unknown and lean on their characters, as
unseen ones must); characters keep their case. A word's affixes and shape
(`AFFIXES`, the linear tagger's way of guessing unknown words) have vocabularies of
their own, of the strings seen at least twice: a suffix that marks a case or a tense
is then one learnt vector, not something the character convolution must find. The
outputs are the joint (UPOS, XPOS) classes of the tagger, whole FEATS strings (UDPipe
2 predicts them so, Straka 2018) and the relations (DEPREL with subtypes). Ids 0 and 1
of words and characters are "unknown" and "padding"; characters 2 and 3 mark a word's
start and end.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from models.text.shape import char_classes

UNKNOWN, PAD, BOW, EOW = 0, 1, 2, 3
AFFIXES = ("p1", "p2", "p3", "s1", "s2", "s3", "s4", "shape")
MIN_WORD_COUNT = 2
MAX_CHARS = 20           # longer words keep their first 8 and last 12 characters


def affix_strings(form: str) -> list[str]:
    """The `AFFIXES` of a word: its lowercase prefixes of 1-3 and suffixes of 1-4
    characters, and its shape."""
    low = form.lower()
    return [low[:1], low[:2], low[:3], low[-1:], low[-2:], low[-3:], low[-4:],
            char_classes(form, 8)]


@dataclass(frozen=True)
class Vocab:
    """words: lowercase forms (id = position + 2); chars: characters (id = position + 4);
    classes: (UPOS, XPOS) pairs; feats: FEATS strings; labels: relations; affixes: per
    `AFFIXES` column its strings (id = position + 1, 0 unknown)."""

    words: tuple[str, ...]
    chars: tuple[str, ...]
    classes: tuple[tuple[str, str], ...]
    feats: tuple[str, ...]
    labels: tuple[str, ...]
    affixes: tuple[tuple[str, ...], ...] = ()

    @classmethod
    def build(cls, sentences: Sequence[Sequence[tuple[str, str, str, str, str]]],
              classes: Sequence[tuple[str, str]] | None = None) -> Vocab:
        """From sentences of (form, upos, xpos, feats, deprel) words; `classes` fixes the
        tag classes and their order (a linear tagger's, to be added to its scores)."""
        words, chars, tags, feats, labels = Counter(), Counter(), Counter(), Counter(), Counter()
        affixes = [Counter() for _ in AFFIXES]
        for s in sentences:
            for form, upos, xpos, fs, rel in s:
                words[form.lower()] += 1
                for c, a in zip(affixes, affix_strings(form)):
                    c[a] += 1
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
                   labels=tuple(sorted(labels)),
                   affixes=tuple(tuple(sorted(a for a, n in c.items() if n >= MIN_WORD_COUNT))
                                 for c in affixes))

    def to_json(self) -> dict:
        return {"words": list(self.words), "chars": "".join(self.chars),
                "classes": [list(c) for c in self.classes], "feats": list(self.feats),
                "labels": list(self.labels), "affixes": [list(a) for a in self.affixes]}

    @classmethod
    def from_json(cls, d: dict) -> Vocab:
        return cls(tuple(d["words"]), tuple(d["chars"]),
                   tuple(tuple(c) for c in d["classes"]), tuple(d["feats"]),
                   tuple(d["labels"]), tuple(tuple(a) for a in d.get("affixes", ())))


class Lookup:
    """String -> id maps of a `Vocab`, for encoding words."""

    def __init__(self, vocab: Vocab):
        self.vocab = vocab
        self.word = {w: i + 2 for i, w in enumerate(vocab.words)}
        self.char = {c: i + 4 for i, c in enumerate(vocab.chars)}
        self.cls = {c: i for i, c in enumerate(vocab.classes)}
        self.feats = {f: i for i, f in enumerate(vocab.feats)}
        self.label = {r: i for i, r in enumerate(vocab.labels)}
        self.affix = [{a: i + 1 for i, a in enumerate(col)} for col in vocab.affixes]

    def word_id(self, form: str) -> int:
        return self.word.get(form.lower(), UNKNOWN)

    def affix_ids(self, form: str) -> np.ndarray:
        """int32 [len(vocab.affixes)]: the id of each of the word's affixes (0 unknown)."""
        return np.array([m.get(a, 0) for m, a in zip(self.affix, affix_strings(form))],
                        np.int32)

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
