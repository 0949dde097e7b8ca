"""Morphological features (FEATS) from a word's form and tags, learned by counting.

English FEATS in EWT follow from XPOS for most words (NNS -> Number=Plur, VBD ->
Mood=Ind|Tense=Past|VerbForm=Fin, ...) and from the word itself for pronouns,
determiners and auxiliaries, and for some of these from the left neighbour
(Person of "have" after "I"/"you", Case=Acc of "it" after a verb, Mood=Imp of
a sentence-initial VB). So: the most frequent FEATS in training of, in order,
(previous lowercased word, word, tags), (previous XPOS, word, tags), (word,
tags), (tags), else "_"; each context level is kept only where it was seen at
least twice and differs from the level below. No classifier: cheap, and as good
as the tags it is given. Saved as one JSON file.
"""
from __future__ import annotations

import json
import logging
import os
from collections import Counter, defaultdict
from collections.abc import Sequence

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1


class FeatsGuesser:
    def __init__(self, by_word: dict[str, str] | None = None,
                 by_tag: dict[str, str] | None = None,
                 by_prev_word: dict[str, str] | None = None,
                 by_prev_tag: dict[str, str] | None = None):
        self.by_word = by_word or {}  # "lower\tupos\txpos" -> feats
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
        # keep a word entry only where it differs from what its tags give
        word_best = {}
        for k, c in by_word.items():
            best = c.most_common(1)[0][0]
            if best != tag_best[k.split("\t", 1)[1]]:
                word_best[k] = best
        def word_level(key: str) -> str:
            return word_best.get(key) or tag_best[key.split("\t", 1)[1]]

        contexts = []
        for table in (by_pw, by_pt):
            best_of = {}
            for k, c in table.items():
                best, n = c.most_common(1)[0]
                if n >= 2 and best != word_level(k.split("\t", 1)[1]):
                    best_of[k] = best
            contexts.append(best_of)
        logger.info("feats: %d word entries, %d tag entries, %d + %d context entries",
                    len(word_best), len(tag_best), len(contexts[0]), len(contexts[1]))
        return cls(word_best, tag_best, contexts[0], contexts[1])

    def predict(self, forms: Sequence[str], upos: Sequence[str], xpos: Sequence[str]
                ) -> list[str]:
        out = []
        prev_w, prev_t = "<s>", "<s>"
        for f, u, x in zip(forms, upos, xpos, strict=True):
            key = f"{f.lower()}\t{u}\t{x}"
            hit = self.by_prev_word.get(f"{prev_w}\t{key}") or \
                self.by_prev_tag.get(f"{prev_t}\t{key}") or self.by_word.get(key)
            out.append(hit if hit is not None else self.by_tag.get(f"{u}\t{x}", "_"))
            prev_w, prev_t = f.lower(), x
        return out

    def save(self, directory: str) -> None:
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "feats.json"), "w", encoding="utf-8") as f:
            json.dump({"format_version": FORMAT_VERSION, "by_word": self.by_word,
                       "by_tag": self.by_tag, "by_prev_word": self.by_prev_word,
                       "by_prev_tag": self.by_prev_tag}, f, ensure_ascii=False,
                      separators=(",", ":"))

    @classmethod
    def load(cls, directory: str) -> FeatsGuesser:
        with open(os.path.join(directory, "feats.json"), encoding="utf-8") as f:
            d = json.load(f)
        if d.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"feats format {d.get('format_version')} != {FORMAT_VERSION}")
        return cls(d["by_word"], d["by_tag"], d["by_prev_word"], d["by_prev_tag"])
