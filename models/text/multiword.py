"""Multiword tokens ("don't" -> "do" + "n't"), learned from a treebank's gold tokens.

Written after UDPipe 1's multiword splitter (`multiword_splitter_trainer.cpp`): two kinds
of rules, both read from the train file's multiword-token ranges.

- full rules: a surface token -> its words ("can't" -> "ca", "n't"); kept when the token
  is split (the same way) more often than it stands as a word of its own;
- suffix rules: an ending -> the words it makes ("n't" -> "", "n't": "...n't" splits
  before "n't"), drawn from the full rules; kept when more than `SUFFIX_MARGIN` times
  as many distinct multiword tokens support it as plain tokens of the train file end
  in it, so that a productive clitic is learned (Turkish "-daki", "-ydı") and a common
  ending is not.

A token takes its full rule, else its longest suffix rule that leaves at least one
character before it. Matching is on folded forms (lowercase, ’ as '). Words that
concatenate to the token are cut from the token itself, so they keep its casing and
their place in the text; otherwise (Spanish "del" -> "de" + "el") the rule's forms are
cased like the token (all capitals, or a capital first letter). Unlike UDPipe, a
suffix rule is drawn only where the token and its first word share the characters
cut off, and words written "_" (annotation gaps) make no rule.
"""
from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from models.text._conllu import Sentence

logger = logging.getLogger(__name__)

# supporting types per plain token ending in the suffix. UDPipe takes 10, which drops
# English "'s" (320 types, 48 plain tokens in en_ewt train); with 5, dev word F1 per
# sentence text is 99.14 on en_ewt (10: 99.08) and 97.87 on tr_imst (10: 97.85).
SUFFIX_MARGIN = 5
# the English clitics every tokenizer applied before rules were learned (lexicon format 1)
LEGACY_SUFFIXES = {s: ["", s] for s in ("n't", "'s", "'re", "'ve", "'ll", "'d", "'m")}


def fold(form: str) -> str:
    """Lowercase with one character per character (so offsets carry over; "İ" -> "i")
    and the typographic apostrophe as "'"."""
    low = form.lower()
    if len(low) != len(form):
        low = "".join(c.lower()[0] for c in form)
    return low.replace("’", "'")


@dataclass
class MultiwordRules:
    full: dict[str, list[str]] = field(default_factory=dict)
    suffixes: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._longest = max(map(len, self.suffixes), default=0)

    def __bool__(self) -> bool:
        return bool(self.full or self.suffixes)

    def split(self, form: str) -> list[str] | None:
        """The words of the surface token `form`, or None when it is a single word."""
        key = fold(form)
        words = self.full.get(key)
        cut = 0                            # characters of `form` before the rule's words
        if words is None:
            for k in range(min(self._longest, len(key) - 1), 0, -1):
                words = self.suffixes.get(key[-k:])
                if words is not None:
                    cut = len(key) - k
                    break
            else:
                return None
        if key[:cut] + "".join(words) == key:     # the words spell the token: cut it
            out, p = [], 0
            for i, w in enumerate(words):
                n = len(w) + (cut if i == 0 else 0)
                out.append(form[p:p + n])
                p += n
            return out
        return _cased(form, form[:cut], words)

    def to_json(self) -> dict:
        return {"full": dict(sorted(self.full.items())),
                "suffixes": dict(sorted(self.suffixes.items()))}

    @classmethod
    def from_json(cls, data: dict) -> MultiwordRules:
        return cls({k: list(v) for k, v in data["full"].items()},
                   {k: list(v) for k, v in data["suffixes"].items()})

    @classmethod
    def from_lengths(cls, lengths: dict[str, list[int]]) -> MultiwordRules:
        """Rules of a format-1 lexicon (token -> word lengths), with the English clitic
        suffixes its tokenizer applied to every token."""
        full = {}
        for key, ns in lengths.items():
            words, p = [], 0
            for n in ns:
                words.append(key[p:p + n])
                p += n
            full[fold(key)] = [fold(w) for w in words]
        return cls(full, {k: list(v) for k, v in LEGACY_SUFFIXES.items()})


def _cased(form: str, prefix: str, words: list[str]) -> list[str]:
    """Words of a rule that does not spell the token, cased like it (UDPipe's rule)."""
    if not form[:1].isupper():
        return [prefix + words[0], *words[1:]]
    if not any(c.islower() for c in form):
        return [(prefix + words[0]).upper(), *(w.upper() for w in words[1:])]
    first = words[0] if prefix else words[0][:1].upper() + words[0][1:]
    return [prefix + first, *words[1:]]


def _without_redundant(suffixes: dict[str, list[str]]) -> dict[str, list[str]]:
    """Drop each suffix rule that splits every token it matches as the rule of its
    longest proper suffix does ("on't" -> "o" "n't" beside "n't" -> "" "n't")."""
    out = {}
    for sfx, words in suffixes.items():
        shorter = next((j for j in range(1, len(sfx)) if sfx[j:] in suffixes), None)
        if shorter is None or len(words[0]) < shorter:
            out[sfx] = words
            continue
        other = suffixes[sfx[shorter:]]
        if other[0] != words[0][shorter:] or other[1:] != words[1:]:
            out[sfx] = words
    return out


def count_tokens(sentences: Iterable[Sentence]
                 ) -> tuple[dict[str, Counter[tuple[str, ...]]], Counter[str]]:
    """Each folded surface form's ways of splitting into words (multiword tokens whose
    words are all written) and how often it stands as one word, in the gold tokens."""
    splits: dict[str, Counter[tuple[str, ...]]] = defaultdict(Counter)
    plain: Counter[str] = Counter()
    for s in sentences:
        for t in s.tokens:
            key = fold(t.form)
            if t.last == t.first:
                plain[key] += 1
                continue
            words = tuple(fold(w.form) for w in s.words[t.first:t.last + 1])
            if all(w and w != "_" for w in words):
                splits[key][words] += 1
    return splits, plain


def learn_multiword(sentences: Iterable[Sentence]) -> MultiwordRules:
    """Full and suffix rules from the gold tokens of `sentences` (see the module doc)."""
    splits, plain = count_tokens(sentences)
    full = {}
    for key, ways in splits.items():
        words, n = ways.most_common(1)[0]
        if n > plain[key]:
            full[key] = list(words)
    support: dict[str, Counter[tuple[str, ...]]] = defaultdict(Counter)
    for key, words in full.items():
        first = words[0]
        for k in range(min(len(key) - 1, len(first)), 0, -1):
            if key[:k] == first[:k]:
                support[key[k:]][(first[k:], *words[1:])] += 1
    votes = {suffix: ways.most_common(1)[0] for suffix, ways in support.items()}
    ending: Counter[str] = Counter()
    for form, n in plain.items():
        for i in range(1, len(form)):
            if form[i:] in votes:
                ending[form[i:]] += n
    suffixes = {sfx: list(words) for sfx, (words, n) in votes.items()
                if n > SUFFIX_MARGIN * ending[sfx]}
    rules = MultiwordRules(full, _without_redundant(suffixes))
    logger.info("multiword tokens: %d full rules, %d suffix rules", len(full), len(suffixes))
    return rules
