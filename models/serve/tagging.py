"""Tagging a sentence for the parser: which tagger, and re-tagging where it hesitates.

Three taggers a request can choose: `fast`, the linear tagger; `accurate`, the
linear tagger plus the neural analyser (`neural/tagger.py`), where the model has
one; and `contextual`, the same with the analyser that also reads a pretrained
encoder (`contextual/`), where the model has it. A `contextual` request runs on the
parts' contextual view (`Components.with_contextual`), where that analyser is the
accurate one. Lemmas come from the lemmatizer, over the chosen tags. `choose_tags` lets the
parser decide between a hesitant word's two best tags (a light joint tagging and
parsing step, cf. Bohnet & Nivre 2012).
"""
from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from models.errors import ModelError
from models.graph.decoders import BudgetError
from models.serve.components import Components

FAST, ACCURATE, AUTO = "fast", "accurate", "auto"   # auto: the most accurate one there is
CONTEXTUAL = "contextual"
Tags = tuple[list[str], list[str], list[str]]      # (upos, xpos, lemmas)


class Tagging:
    def __init__(self, c: Components):
        self.c = c
        self.flips = c.config.tag_flips

    @property
    def taggers(self) -> list[str]:
        """The taggers a request may choose, the most accurate last: `fast`, and where
        the model has them, `accurate` (several times slower per token) and
        `contextual`."""
        if self.c.tagger is None:
            return []
        return ([FAST] + ([ACCURATE] if self.c.accurate is not None else [])
                + ([CONTEXTUAL] if self.c.contextual is not None else []))

    def resolve(self, name: str) -> str:
        """`auto` as the tagger it stands for (the last of `taggers`); other names as
        they are."""
        if name == AUTO:
            return self.taggers[-1] if self.taggers else FAST
        return name

    def tagger(self, name: str):
        name = self.resolve(name)
        if self.c.tagger is None:
            raise ModelError(f"model {self.c.config.name} has no tagger: send tagged "
                             "CoNLL-U input")
        if name == FAST:
            return self.c.tagger
        if name == ACCURATE and self.c.accurate is not None:
            return self.c.accurate
        has, why = ", ".join(self.taggers), self.c.unavailable.get(name)
        if why:                  # the model has it, this install cannot run it
            raise BudgetError(f"model {self.c.config.name}'s {name} tagger is off here: "
                              f"{why}; it has: {has}")
        raise BudgetError(f"unknown tagger {name!r}; model {self.c.config.name} has: {has}")

    def lemmas(self, forms: Sequence[str], upos: Sequence[str], xpos: Sequence[str]
               ) -> list[str]:
        if self.c.lemmatizer is None:
            return [f.lower() for f in forms]
        return list(self.c.lemmatizer.lemmatize(forms, upos, xpos))

    def tag(self, forms: Sequence[str], tagger: str = FAST) -> Tags:
        """(upos, xpos, lemmas) from the chosen tagger and the lemmatizer."""
        upos, xpos = self.tagger(tagger).tag(list(forms))
        return list(upos), list(xpos), self.lemmas(forms, upos, xpos)

    def tag_for(self, forms: Sequence[str], tagger: str, decoder: str,
                deadline: float | None = None) -> Tags:
        """Tags for a parse with `decoder`: re-tagged by the parser for the decoders
        of the model's `tag_flips`, the tagger's own otherwise."""
        if decoder in self.flips.decoders:
            return self.choose_tags(forms, tagger, deadline)
        return self.tag(forms, tagger)

    def choose_tags(self, forms: Sequence[str], tagger: str = FAST,
                    deadline: float | None = None) -> Tags:
        """(upos, xpos, lemmas) like `tag`, except that where the tagger hesitates the
        parser decides: for the `flips` words of smallest margin below `margin`, in
        that order, the second-best tag is kept when the first-order MST tree it gives
        (over the arcs pruning keeps for the tagger's tags) scores higher under the
        first-order (pruning) model, net of `weight` x the tagger's margin. No word is
        tried once `deadline` (time.monotonic()) has passed (issue 20)."""
        f = self.flips
        graph = self.c.graph
        if self.c.tagger is None or not f.flips or graph.pruner is None:
            return self.tag(forms, tagger)
        chosen = self.tagger(tagger)

        def tags(cls) -> Tags:
            up = [chosen.classes[c][0] for c in cls]
            xp = [chosen.classes[c][1] for c in cls]
            return up, xp, self.lemmas(forms, up, xp)

        best, second, margin = chosen.alternatives(list(forms))
        order = [int(i) for i in np.argsort(margin, kind="stable")[:f.flips]
                 if margin[i] < f.margin]
        if not order:                # the tagger's own tags (best is its argmax), not re-run
            return tags(best)

        def score(cls, allowed=None):
            up, xp, lem = tags(cls)
            return graph.first_order_best(graph.encode(forms, lem, up, xp), allowed)

        cur = best.copy()
        cur_score, allowed = score(cur)        # the variants are scored on the same arcs
        for i in order:
            if deadline is not None and time.monotonic() >= deadline:
                break
            alt = cur.copy()
            alt[i] = second[i]
            s = score(alt, allowed)[0] - f.weight * float(margin[i])
            if s > cur_score:
                cur, cur_score = alt, s
        return tags(cur)
