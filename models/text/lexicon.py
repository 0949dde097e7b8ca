"""Tokenization lexicons learned from a UD treebank (EWT conventions).

The rule-based scanner in `tokenizer.py` handles what rules do well (URLs,
e-mail addresses, numbers with separators, clitic suffixes); what is a matter
of convention is read from the gold tokenization of the training data:

- `abbreviations`: lowercased tokens ending in "." that are words ("dr.", "u.s.").
- `mwt`: lowercased surface tokens that are multiword tokens more often than
  not, with the lengths of their words ("can't" -> [2, 3]: "ca" + "n't").
- `joined`: lowercased tokens with inner punctuation kept whole more often than
  split ("e-mail", "at&t", "yahoo!").
- `hyphen_prefixes`: first parts X of tokens "X-Y" kept whole ("co", "non").

Saved as one JSON file; no pickling.
"""
from __future__ import annotations

import json
import logging
import os
import re
from collections import Counter
from dataclasses import dataclass, field

from models.text._conllu import Sentence

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
_HAS_WORD = re.compile(r"\w")
_INNER_PUNCT = re.compile(r"\w[^\w\s]+\w|[^\w\s]\w|\w[^\w\s]")


@dataclass
class Lexicon:
    abbreviations: set[str] = field(default_factory=set)
    mwt: dict[str, list[int]] = field(default_factory=dict)
    joined: set[str] = field(default_factory=set)
    hyphen_prefixes: set[str] = field(default_factory=set)

    def to_json(self) -> dict:
        return {
            "format_version": FORMAT_VERSION,
            "abbreviations": sorted(self.abbreviations),
            "mwt": dict(sorted(self.mwt.items())),
            "joined": sorted(self.joined),
            "hyphen_prefixes": sorted(self.hyphen_prefixes),
        }

    @classmethod
    def from_json(cls, data: dict) -> Lexicon:
        if data.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"lexicon format {data.get('format_version')} != {FORMAT_VERSION}")
        return cls(
            set(data["abbreviations"]),
            {k: list(v) for k, v in data["mwt"].items()},
            set(data["joined"]),
            set(data["hyphen_prefixes"]),
        )

    def save(self, path: str) -> None:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_json(), f, ensure_ascii=False, indent=0)

    @classmethod
    def load(cls, path: str) -> Lexicon:
        with open(path, encoding="utf-8") as f:
            return cls.from_json(json.load(f))


def learn_lexicon(sentences: list[Sentence], min_count: int = 1) -> Lexicon:
    """Read the conventions above from gold surface tokens and their words."""
    whole: Counter[str] = Counter()
    split: Counter[tuple[str, tuple[int, ...]]] = Counter()
    for s in sentences:
        for t in s.tokens:
            low = t.form.lower()
            if t.last > t.first:
                words = s.words[t.first:t.last + 1]
                if "".join(w.form for w in words).lower() == low:
                    split[(low, tuple(len(w.form) for w in words))] += 1
            else:
                whole[low] += 1
    lex = Lexicon()
    split_total: Counter[str] = Counter()
    for (low, _), n in split.items():
        split_total[low] += n
    for (low, lengths), n in split.most_common():
        if low not in lex.mwt and split_total[low] > whole[low] and split_total[low] >= min_count:
            lex.mwt[low] = list(lengths)
    for low, n in whole.items():
        if n < min_count or not _HAS_WORD.search(low):
            continue
        if low.endswith(".") and len(low) > 1 and re.fullmatch(r"[^\W\d_][\w.]*\.", low):
            lex.abbreviations.add(low)
        if _INNER_PUNCT.search(low):
            lex.joined.add(low)
            m = re.fullmatch(r"([^\W\d_]+)-[^\W\d_]+", low)
            if m:
                lex.hyphen_prefixes.add(m.group(1))
    # Keep a joined form / hyphen prefix only where the treebank keeps it whole
    # more often than it splits it into adjacent tokens with no space between.
    glued = _glued_sequences(sentences)
    lex.joined = {j for j in lex.joined if whole[j] > glued[j] + split_total[j]}
    pieces: Counter[str] = Counter()
    for s in sentences:
        forms = [t.form.lower() for t in s.tokens]
        for i in range(len(forms) - 2):
            if forms[i + 1] == "-" and not s.tokens[i].space_after:
                pieces[forms[i]] += 1
    kept: Counter[str] = Counter()
    for low, n in whole.items():
        if re.fullmatch(r"[^\W\d_]+-[^\W\d_]+", low):
            kept[low.split("-", 1)[0]] += n
    lex.hyphen_prefixes = {p for p in lex.hyphen_prefixes if kept[p] > pieces[p]}
    logger.info(
        "lexicon: %d abbreviations, %d multiword tokens, %d joined, %d hyphen prefixes",
        len(lex.abbreviations), len(lex.mwt), len(lex.joined), len(lex.hyphen_prefixes),
    )
    return lex


def _glued_sequences(sentences: list[Sentence], max_len: int = 5) -> Counter[str]:
    """Count lowercased concatenations of 2..max_len adjacent tokens without spaces."""
    glued: Counter[str] = Counter()
    for s in sentences:
        toks = s.tokens
        for i in range(len(toks)):
            text = toks[i].form
            for j in range(i + 1, min(i + max_len, len(toks))):
                if toks[j - 1].space_after:
                    break
                text += toks[j].form
                glued[text.lower()] += 1
    return glued
