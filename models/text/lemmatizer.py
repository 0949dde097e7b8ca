"""Lemmatizer learned from a treebank: a lexicon plus suffix edit rules.

1. Lexicon: (form, tags) -> lemma, then (lowercased form, tags) -> lemma, the
   most frequent lemma of pairs seen in training. The tags are (UPOS, XPOS): a
   treebank without XPOS (hu_szeged) still lemmatizes by part of speech. Models of
   format 1 keyed on XPOS alone, and still do.
2. Suffix rules for other words: a rule is (case, cut, add): take the form
   (lowercased if case == "lower"), drop `cut` final characters, append `add`
   ("studies" -> ("lower", 3, "y")). Rules are counted over word types per
   (tags, case pattern of the form, last k letters of the lowercased form) for
   k = cut..MAX_SUFFIX (a suffix holds what its rule cuts); the longest suffix
   seen at least `min_count` times gives its most frequent rule. With a
   `dictionary` (the tagger's WordNet lemma lists), the longest suffix whose
   rule gives a lemma WordNet lists for the word's UPOS wins instead
   ("provoked" -> "provoke", not "provok").
3. Fallback (no rule applies, or the rule cannot be applied to a short form):
   the form itself for PROPN and for forms with no letters, else the lowercased
   form.
Saved as one JSON file.
"""
from __future__ import annotations

import json
import logging
import os
from collections import Counter, defaultdict
from collections.abc import Sequence

logger = logging.getLogger(__name__)

FORMAT_VERSION = 2       # 2: keyed on (UPOS, XPOS); 1: on XPOS alone
MAX_SUFFIX = 6
_WORDNET_POS = {"NOUN": "noun", "VERB": "verb", "AUX": "verb", "ADJ": "adj", "ADV": "adv"}


def edit_rule(form: str, lemma: str) -> tuple[str, int, str]:
    """The (case, cut, add) rule turning form into lemma."""
    base, case = (form, "keep") if lemma[:1] == form[:1] else (form.lower(), "lower")
    if case == "keep" and lemma != form and lemma.lower() == lemma and form.lower() != form:
        base, case = form.lower(), "lower"
    p = 0
    while p < min(len(base), len(lemma)) and base[p] == lemma[p]:
        p += 1
    return case, len(base) - p, lemma[p:]


def apply_rule(form: str, rule: Sequence) -> str | None:
    case, cut, add = rule
    base = form.lower() if case == "lower" else form
    if cut >= len(base) and not add:
        return None
    return base[:len(base) - cut] + add


def case_class(form: str) -> str:
    if form.islower() or not any(c.isalpha() for c in form):
        return "l"
    if form.isupper():
        return "U"
    return "T" if form[:1].isupper() and form[1:].islower() else "M"


def fallback(form: str, upos: str) -> str:
    if upos == "PROPN" or not any(c.isalpha() for c in form):
        return form
    return form.lower()


def tags_key(upos: str, xpos: str, by_upos: bool = True) -> str:
    """The tags a word's lexicon entries and rules are kept under."""
    return f"{upos}|{xpos}" if by_upos else xpos


class Lemmatizer:
    def __init__(self, exact: dict[str, str] | None = None, lower: dict[str, str] | None = None,
                 rules: dict[str, list] | None = None, min_count: int = 2,
                 dictionary=None, by_upos: bool = True):
        self.exact = exact or {}  # "form\ttags" -> lemma
        self.lower = lower or {}  # "lowercased form\ttags" -> lemma
        self.rules = rules or {}  # "tags\tcase\tsuffix" -> [case, cut, add]
        self.min_count = min_count
        self.by_upos = by_upos    # tags: (UPOS, XPOS); False in format 1 (XPOS)
        # optional `WordClasses`: among the rules of an unseen word's suffixes, longest
        # first, the first whose output WordNet lists for the word's UPOS wins
        self.dictionary = dictionary

    @classmethod
    def train(cls, sentences: Sequence[Sequence[Sequence[str]]], min_count: int = 2
              ) -> Lemmatizer:
        """sentences of (form, upos, xpos, lemma, ...) tuples."""
        exact: dict[str, Counter] = defaultdict(Counter)
        lower: dict[str, Counter] = defaultdict(Counter)
        types: Counter[tuple[str, str, str]] = Counter()   # in order of first occurrence
        for s in sentences:
            for w in s:
                form, tags, lemma = w[0], tags_key(w[1], w[2]), w[3]
                exact[f"{form}\t{tags}"][lemma] += 1
                lower[f"{form.lower()}\t{tags}"][lemma] += 1
                types[(form, tags, lemma)] += 1
        rules: dict[str, Counter] = defaultdict(Counter)
        for (form, tags, lemma) in types:  # types, not tokens: rules for unseen words
            rule = edit_rule(form, lemma)
            low = form.lower()
            # only under suffixes that contain what the rule cuts: a rewrite of the
            # whole word ("better" -> "good", "Dec." -> "December") is no suffix rule
            for k in range(min(rule[1], len(low)), min(MAX_SUFFIX, len(low)) + 1):
                rules[f"{tags}\t{case_class(form)}\t{low[len(low) - k:]}"][rule] += 1
        best_rules = {key: list(c.most_common(1)[0][0]) for key, c in rules.items()
                      if sum(c.values()) >= min_count}
        model = cls({k: c.most_common(1)[0][0] for k, c in exact.items()},
                    {k: c.most_common(1)[0][0] for k, c in lower.items()}, best_rules, min_count)
        logger.info("lemmatizer: %d forms, %d suffix rules", len(model.exact), len(best_rules))
        return model

    def lemma(self, form: str, upos: str, xpos: str) -> str:
        tags = tags_key(upos, xpos, self.by_upos)
        hit = self.exact.get(f"{form}\t{tags}")
        if hit is not None:
            return hit
        low = form.lower()
        hit = self.lower.get(f"{low}\t{tags}")
        if hit is not None:
            return hit
        first = None
        pos = _WORDNET_POS.get(upos) if self.dictionary is not None else None
        for k in range(min(MAX_SUFFIX, len(low)), -1, -1):
            rule = self.rules.get(f"{tags}\t{case_class(form)}\t{low[len(low) - k:]}")
            if rule is None:
                continue
            out = apply_rule(form, rule)
            if first is None:
                first = out
                if pos is None:
                    break
            if out and self.dictionary.is_lemma(out.lower(), pos):
                return out
        return first or fallback(form, upos)

    def lemmatize(self, forms: Sequence[str], upos: Sequence[str], xpos: Sequence[str]
                  ) -> list[str]:
        return [self.lemma(f, u, x) for f, u, x in zip(forms, upos, xpos, strict=True)]

    def save(self, directory: str) -> None:
        os.makedirs(directory, exist_ok=True)
        data = {"format_version": FORMAT_VERSION if self.by_upos else 1,
                "max_suffix": MAX_SUFFIX,
                "min_count": self.min_count, "exact": self.exact, "lower": self.lower,
                "rules": self.rules}
        with open(os.path.join(directory, "lemmatizer.json"), "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def load(cls, directory: str, dictionary=None) -> Lemmatizer:
        """dictionary: the tagger's `WordClasses`, if it has any (see `lemma`)."""
        with open(os.path.join(directory, "lemmatizer.json"), encoding="utf-8") as f:
            d = json.load(f)
        version = d.get("format_version")
        if version not in (1, FORMAT_VERSION) or d.get("max_suffix") != MAX_SUFFIX:
            raise ValueError(f"lemmatizer format {version} != {FORMAT_VERSION}")
        return cls(d["exact"], d["lower"], d["rules"], d["min_count"], dictionary,
                   by_upos=version >= 2)
