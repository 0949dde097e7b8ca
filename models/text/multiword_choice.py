"""Whether a token that goes both ways is a multiword token here, from its neighbours.

Some forms are a multiword token in one place and a single word in another: English
"its" (it + s in "its a shame", the possessive in "its roof"), Turkish "vardı", French
"des" (de + les, or the indefinite article). `multiword.py`'s rules give each form
what it does most often in train, as UDPipe 1's splitter does; this averaged
perceptron decides token by token for the forms train has both ways, from the tokens
around it (UDPipe 2 and Stanza decide every token in context). Its features pair the
context with the form and with the words the split adds ("s" of it + s, cat + s), so
what one form teaches reaches the others that end the same way.
"""
from __future__ import annotations

import logging
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from models.text._conllu import Sentence
from models.text.multiword import MultiwordRules, count_tokens, fold
from models.text.perceptron import GapExamples, load_model, save_model, train_averaged
from models.text.shape import char_classes

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
MIN_EACH_WAY = 2          # a form is a choice when train has it at least this often each way
# held-out tokens a form's chooser must get right beyond the rules to be kept: en_ewt's
# "its" wins 23, its other forms at most 2, and tr_imst's "vardı", which wins 2, lost 2
# of dev's 4 (bench/journal/12-any-treebank.md, "From raw text against UDPipe 1.4")
MIN_WINS = 3
EDGE = "<s>"


def _case(form: str) -> str:
    return "U" if form.isupper() else "C" if form[:1].isupper() else "l"


class MultiwordChooser:
    def __init__(self, words: dict[str, list[str]], weights: np.ndarray | None = None,
                 n_bits: int = 18):
        self.words = words                  # folded form -> its words when it is split
        self.n_bits = n_bits
        self.weights = weights if weights is not None else np.zeros(1 << n_bits, np.float32)
        self._rules = MultiwordRules(words, {})

    def __contains__(self, form: str) -> bool:
        return fold(form) in self.words

    def _features(self, before: Sequence[str], form: str, after: Sequence[str]) -> list[int]:
        """Hashed features of `form` between the tokens `before` (nearest last) and `after`."""
        key = fold(form)
        p1 = fold(before[-1]) if before else EDGE
        n1 = fold(after[0]) if after else EDGE
        n2 = fold(after[1]) if len(after) > 1 else EDGE
        s1 = char_classes(after[0], 4) if after else EDGE
        c1 = _case(after[0]) if after else EDGE
        ctx = ["n1=" + n1, "n2=" + n2, "p1=" + p1, "s1=" + s1, "n1n2=" + n1 + "|" + n2,
               "p1n1=" + p1 + "|" + n1, "x1=" + n1[-2:], "c=" + _case(form) + c1]
        feats = ["f=" + key, "t=" + "|".join(self.words[key][1:])]
        for head in feats[:2]:
            feats += [head + "|" + c for c in ctx]
        mask = (1 << self.n_bits) - 1
        return [zlib.crc32(f.encode("utf-8")) & mask for f in feats]

    def split(self, before: Sequence[str], form: str, after: Sequence[str]) -> list[str] | None:
        """The words of `form` (one of `self.words`) in this context, or None for one word."""
        if self.weights[self._features(before, form, after)].sum() <= 0:
            return None
        return self._rules.split(form)

    @classmethod
    def train(cls, sentences: Iterable[Sentence], rules: MultiwordRules, epochs: int = 10,
              seed: int = 0, folds: int = 5) -> MultiwordChooser | None:
        """The chooser of the forms `sentences` has both ways where it beats `rules`
        (the treebank's own, which decide every other form) by MIN_WINS tokens in a
        `folds`-fold cross-validation on them; None if there are none."""
        sentences = list(sentences)
        ways, plain = count_tokens(sentences)
        words = {k: list(w.most_common(1)[0][0]) for k, w in ways.items()
                 if sum(w.values()) >= MIN_EACH_WAY and plain[k] >= MIN_EACH_WAY}
        if not words:
            return None
        chooser = cls(words)
        cases = [(k % folds, fold(t.form), chooser._example(s, i),
                  1 if rules.split(t.form) is not None else -1)
                 for k, s in enumerate(sentences) for i, t in enumerate(s.tokens)
                 if fold(t.form) in words]
        wins: Counter[str] = Counter()      # held-out tokens the chooser gets right, less
        for f in range(folds):              # those the rules get right
            part = cls(words)
            part.weights = _train(part, [c[2] for c in cases if c[0] != f], epochs, seed)
            for _, key, (ids, label), by_rules in (c for c in cases if c[0] == f):
                chosen = 1 if part.weights[ids].sum() > 0 else -1
                wins[key] += (chosen == label) - (by_rules == label)
        kept = {k: w for k, w in words.items() if wins[k] >= MIN_WINS}
        logger.info("multiword choice: %d of %d forms that go both ways beat the rules"
                    " held out: %s", len(kept), len(words), " ".join(sorted(kept)) or "none")
        if not kept:
            return None
        chooser = cls(kept)
        chooser.weights = _train(chooser, [c[2] for c in cases if c[1] in kept], epochs, seed)
        return chooser

    def _example(self, s: Sentence, i: int) -> tuple[list[int], int]:
        """Features and label (+1 split) of surface token i of gold sentence s."""
        forms = [t.form for t in s.tokens]
        t = s.tokens[i]
        return (self._features(forms[max(0, i - 1):i], t.form, forms[i + 1:i + 3]),
                1 if t.last > t.first else -1)

    def save(self, directory: str) -> None:
        save_model(directory, "multiword_choice", self.weights,
                   {"format_version": FORMAT_VERSION, "n_bits": self.n_bits,
                    "words": dict(sorted(self.words.items()))})

    @classmethod
    def load(cls, directory: str) -> MultiwordChooser:
        w, header = load_model(directory, "multiword_choice", FORMAT_VERSION)
        return cls({k: list(v) for k, v in header["words"].items()}, w, header["n_bits"])


def _train(chooser: MultiwordChooser, examples: list[tuple[list[int], int]], epochs: int,
           seed: int) -> np.ndarray:
    gaps = GapExamples()
    for ids, label in examples:
        gaps.add(ids, label)
    return train_averaged(gaps, chooser.n_bits, epochs, seed, "multiword choice")
