"""Morphological features (FEATS) from a word's form and tags, learned by counting.

English FEATS in EWT follow from XPOS for most words (NNS -> Number=Plur, VBD ->
Mood=Ind|Tense=Past|VerbForm=Fin, ...) and from the word itself for pronouns,
determiners and auxiliaries, and for some of these from the left neighbour
(Person of "have" after "I"/"you", Case=Acc of "it" after a verb, Mood=Imp of
a sentence-initial VB). So: the most frequent FEATS in training of, in order,
(previous lowercased word, word, tags), (previous XPOS, word, tags), (word,
tags), (the word's last k letters, tags) for k = MAX_SUFFIX..1, (tags), else
"_"; each level is kept only where it differs from the level below, and a
context or a suffix only where it was seen at least twice (a suffix: in two word
types). The suffixes carry the inflection of unseen words in languages whose
FEATS the tags do not give (Hungarian, Turkish: case, number, possession), as a
lemmatizer's suffix rules do. No classifier: cheap, and as good as the tags it
is given. Format 1 models (no suffixes) still load. Saved as one JSON file.
"""
from __future__ import annotations

import json
import logging
import os
from collections import Counter, defaultdict
from collections.abc import Sequence

logger = logging.getLogger(__name__)

FORMAT_VERSION = 2            # 2: suffix entries; 1: none
MAX_SUFFIX = 5


class FeatsGuesser:
    def __init__(self, by_word: dict[str, str] | None = None,
                 by_tag: dict[str, str] | None = None,
                 by_prev_word: dict[str, str] | None = None,
                 by_prev_tag: dict[str, str] | None = None,
                 by_suffix: dict[str, str] | None = None):
        self.by_word = by_word or {}  # "lower\tupos\txpos" -> feats
        self.by_suffix = by_suffix or {}  # "suffix\tupos\txpos" -> feats
        self.by_tag = by_tag or {}  # "upos\txpos" -> feats
        self.by_prev_word = by_prev_word or {}  # "prev lower\tlower\tupos\txpos" -> feats
        self.by_prev_tag = by_prev_tag or {}  # "prev xpos\tlower\tupos\txpos" -> feats

    @classmethod
    def train(cls, sentences: Sequence[Sequence[Sequence[str]]]) -> FeatsGuesser:
        """sentences of (form, upos, xpos, lemma, feats) tuples."""
        by_word: dict[str, Counter] = defaultdict(Counter)
        by_tag: dict[str, Counter] = defaultdict(Counter)
        by_pw: dict[str, Counter] = defaultdict(Counter)
        by_pt: dict[str, Counter] = defaultdict(Counter)
        for s in sentences:
            prev_w, prev_t = "<s>", "<s>"
            for w in s:
                key = f"{w[0].lower()}\t{w[1]}\t{w[2]}"
                by_word[key][w[4]] += 1
                by_tag[f"{w[1]}\t{w[2]}"][w[4]] += 1
                by_pw[f"{prev_w}\t{key}"][w[4]] += 1
                by_pt[f"{prev_t}\t{key}"][w[4]] += 1
                prev_w, prev_t = w[0].lower(), w[2]
        tag_best = {k: c.most_common(1)[0][0] for k, c in by_tag.items()}
        # suffixes, counted over word types (what unseen words are like), each kept
        # where it differs from the next shorter one's (the tags' for k = 1)
        by_sfx: dict[str, Counter] = defaultdict(Counter)
        for k, c in by_word.items():
            low, tags = k.split("\t", 1)
            for n in range(1, min(MAX_SUFFIX, len(low)) + 1):
                by_sfx[f"{low[-n:]}\t{tags}"][c.most_common(1)[0][0]] += 1
        suffix_best: dict[str, str] = {}
        for k, c in sorted(by_sfx.items(), key=lambda kc: kc[0].index("\t")):  # shortest first
            best, count = c.most_common(1)[0]
            if count >= 2 and best != _by_suffix(suffix_best, tag_best, k, k.index("\t") - 1):
                suffix_best[k] = best
        # keep a word entry only where it differs from what its suffixes and tags give
        word_best = {}
        for k, c in by_word.items():
            best = c.most_common(1)[0][0]
            low, tags = k.split("\t", 1)
            if best != _by_suffix(suffix_best, tag_best, f"{low}\t{tags}", MAX_SUFFIX):
                word_best[k] = best

        def word_level(key: str) -> str:
            return word_best.get(key) or _by_suffix(suffix_best, tag_best, key, MAX_SUFFIX)

        contexts = []
        for table in (by_pw, by_pt):
            best_of = {}
            for k, c in table.items():
                best, n = c.most_common(1)[0]
                if n >= 2 and best != word_level(k.split("\t", 1)[1]):
                    best_of[k] = best
            contexts.append(best_of)
        logger.info("feats: %d word entries, %d suffix entries, %d tag entries, %d + %d "
                    "context entries", len(word_best), len(suffix_best), len(tag_best),
                    len(contexts[0]), len(contexts[1]))
        return cls(word_best, tag_best, contexts[0], contexts[1], suffix_best)

    def predict(self, forms: Sequence[str], upos: Sequence[str], xpos: Sequence[str]
                ) -> list[str]:
        out = []
        prev_w, prev_t = "<s>", "<s>"
        for f, u, x in zip(forms, upos, xpos, strict=True):
            key = f"{f.lower()}\t{u}\t{x}"
            hit = self.by_prev_word.get(f"{prev_w}\t{key}") or \
                self.by_prev_tag.get(f"{prev_t}\t{key}") or self.by_word.get(key)
            out.append(hit if hit is not None else
                       _by_suffix(self.by_suffix, self.by_tag, key, MAX_SUFFIX, "_"))
            prev_w, prev_t = f.lower(), x
        return out

    def save(self, directory: str) -> None:
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "feats.json"), "w", encoding="utf-8") as f:
            json.dump({"format_version": FORMAT_VERSION, "by_word": self.by_word,
                       "by_suffix": self.by_suffix, "by_tag": self.by_tag,
                       "by_prev_word": self.by_prev_word, "by_prev_tag": self.by_prev_tag},
                      f, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def load(cls, directory: str) -> FeatsGuesser:
        with open(os.path.join(directory, "feats.json"), encoding="utf-8") as f:
            d = json.load(f)
        if d.get("format_version") not in (1, FORMAT_VERSION):
            raise ValueError(f"feats format {d.get('format_version')} != {FORMAT_VERSION}")
        return cls(d["by_word"], d["by_tag"], d["by_prev_word"], d["by_prev_tag"],
                   d.get("by_suffix"))


def _by_suffix(by_suffix: dict[str, str], by_tag: dict[str, str], key: str, longest: int,
               default: str | None = None) -> str | None:
    """FEATS of "lowercased word\\ttags" `key` by its longest suffix of at most
    `longest` letters that has an entry, else by its tags."""
    low, tags = key.split("\t", 1)
    for n in range(min(longest, len(low)), 0, -1):
        hit = by_suffix.get(f"{low[-n:]}\t{tags}")
        if hit is not None:
            return hit
    return by_tag.get(tags, default)
