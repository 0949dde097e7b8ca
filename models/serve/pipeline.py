"""A loaded model: the one object a worker holds per model.

It turns raw text, token lists or CoNLL-U sentences into parsed sentences, and
knows no HTTP and no cache. Its jobs live in their own modules: loading and
versioning (`components.py`, settings in `pipeline_config.py`), tagging and
re-tagging (`tagging.py`), the parse policy (`parse_policy.py`) and the output
(`parsed.py`).
"""
from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from models.conllu import Sentence
from models.decoders import Budget, BudgetError, deadline_of, find
from models.errors import ModelError
from models.serve.components import Components, load_components
from models.serve.parse_policy import (
    NEURAL,
    SELECTIONAL,
    ahead_costs,
    ahead_windows,
    analyze_ahead,
    check_budget,
    decoders,
    mix_feats,
    parse_tagged,
    specs,
    take_analysers,
)
from models.serve.parsed import MultiwordToken, ParsedToken, ParsedTree, assemble, mark_tokens
from models.serve.registry import resolve
from models.serve.tagging import ACCURATE, AUTO, CONTEXTUAL, FAST, Tagging

__all__ = ["ACCURATE", "AUTO", "CONTEXTUAL", "FAST", "NEURAL", "SELECTIONAL", "MultiwordToken",
           "ParsedToken", "ParsedTree", "Pipeline"]

logger = logging.getLogger(__name__)


class Pipeline:
    def __init__(self, components: Components):
        self.c = components
        self.tagging = Tagging(components)
        self._taggings: dict[int, Tagging] = {id(components): self.tagging}

    @classmethod
    def load(cls, name_or_path: str | Path) -> Pipeline:
        return cls(load_components(resolve(name_or_path)))

    # ---- identity ------------------------------------------------------------
    name = property(lambda self: self.c.config.name)
    language = property(lambda self: self.c.config.language)
    version = property(lambda self: self.c.version)
    directory = property(lambda self: self.c.directory)
    graph = property(lambda self: self.c.graph)
    tokenizer = property(lambda self: self.c.tokenizer)
    tagger = property(lambda self: self.c.tagger)
    lemmatizer = property(lambda self: self.c.lemmatizer)
    transition = property(lambda self: self.c.transition)
    analyser = property(lambda self: self.c.analyser)
    analysers = property(lambda self: self.c.analysers)
    taggers = property(lambda self: self.tagging.taggers)
    labels = property(lambda self: list(self.c.graph.labels))

    @property
    def encoder(self) -> dict | None:
        """The pretrained encoder of the contextual analyser (name, package versions,
        layers), None without one."""
        ctx = self.c.contextual
        return None if ctx is None else ctx.context.spec.to_json()

    @property
    def unavailable(self) -> dict[str, str]:
        """Taggers the model has but this install cannot run, each with why (the
        contextual one without its encoder's package: what to install)."""
        return dict(self.c.unavailable)

    @property
    def arc_weight(self) -> float | None:
        """What `neural` unset means with the accurate tagger (None: no analyser)."""
        return self.c.config.arc_weight if self.c.analyser is not None else None

    @property
    def graph_parts(self) -> dict[str, Any]:
        """What the graph model scores: its order, its tensor component's rank (0: none;
        it adds to the arc scores, so every graph decoder uses it) and whether it has
        global features (greedy and sampling score them, mst and bgi do not)."""
        g = self.c.graph
        return {"order": g.order, "tensor_rank": 0 if g.tensor is None else g.tensor.rank,
                "global_features": g.global_features}

    def decoders(self) -> dict[str, dict[str, Any]]:
        """Decoder name -> its budget fields and defaults."""
        return decoders(self.c)

    def budget(self, decoder: str, budget: Mapping[str, Any] | None = None,
               tagger: str = AUTO, checked: bool = False) -> Budget:
        """A request's budget for `decoder`, checked once (`parse_policy.check_budget`,
        with the defaults of the analyser `tagger` uses), or, `checked`, as the gateway
        completed and checked it (its job says so): what the parse methods take."""
        if isinstance(budget, Budget):
            return budget
        if checked:
            return find(decoder, specs(self.c)).taken(budget or {})
        tagger = self.tagging.resolve(tagger)
        view = self.c.with_contextual() if tagger == CONTEXTUAL and \
            self.c.contextual is not None else self.c
        return check_budget(self.c, decoder, budget, view.config.decoder_defaults)

    # ---- front-end -----------------------------------------------------------
    def tag(self, forms: Sequence[str], tagger: str = AUTO) -> tuple[list, list, list]:
        """(upos, xpos, lemmas) from the model's own tagger (`taggers`) and lemmatizer."""
        _, tagging, _, inner = self._view(None, tagger)
        return tagging.tag(forms, inner)

    def choose_tags(self, forms: Sequence[str], tagger: str = AUTO) -> tuple[list, list, list]:
        _, tagging, _, inner = self._view(None, tagger)
        return tagging.choose_tags(forms, inner)

    def tokenize(self, text: str, split: bool = True, limit: int | None = None
                 ) -> list[list]:
        """Sentences of the words (`text.tokenizer.Token`) of raw text; with `limit`,
        tokenizing stops past `limit` tokens (`Tokenizer.tokenize_sentence`)."""
        if self.c.tokenizer is None:
            raise ModelError(f"model {self.name} has no tokenizer: send pre-tokenized input")
        tok = self.c.tokenizer
        sents = tok.tokenize(text, limit) if split else [tok.tokenize_sentence(text, limit)]
        return [s for s in sents if s]

    def _view(self, budget: Mapping[str, Any] | None, tagger: str = AUTO
              ) -> tuple[Components, Tagging, Mapping[str, Any], str]:
        """The parts and tagging a request's tagger and budget field `analysers` ask
        for, the budget without that field, and the tagger within those parts: the
        `contextual` tagger is the `accurate` one of the contextual view
        (`Components.with_contextual`)."""
        tagger = self.tagging.resolve(tagger)
        if tagger == CONTEXTUAL and self.c.contextual is not None:
            c, tagger = self.c.with_contextual(), ACCURATE
            _, budget = take_analysers(self.c, budget)
        else:
            c, budget = take_analysers(self.c, budget)
        if id(c) not in self._taggings:
            self._taggings[id(c)] = Tagging(c)
        return c, self._taggings[id(c)], budget, tagger

    def analyze_ahead(self, sentences: Sequence[Sequence[str]], tagger: str,
                      budget: Mapping[str, Any] | None = None) -> None:
        """Analyse a job's sentences as one batch where their parses will use it."""
        c, _, budget, inner = self._view(budget, tagger)
        analyze_ahead(c, sentences, inner == ACCURATE, budget)

    def ahead_costs(self, sentences: Sequence[Sequence[str]], tagger: str,
                    budget: Mapping[str, Any] | None = None) -> list[int]:
        """What `analyze_ahead` costs on each sentence, in words or, for a contextual
        analyser, the encoder's pieces (`parse_policy.ahead_costs`)."""
        c, _, budget, inner = self._view(budget, tagger)
        return ahead_costs(c, sentences, inner == ACCURATE, budget)

    # ---- parsing -------------------------------------------------------------
    def parse_words(self, forms: Sequence[str], decoder: str = "greedy",
                    budget: Budget | Mapping[str, Any] | None = None, *,
                    upos: Sequence[str] | None = None,
                    xpos: Sequence[str] | None = None, lemmas: Sequence[str] | None = None,
                    offsets: Sequence[tuple[int, int]] | None = None,
                    tagger: str = AUTO) -> ParsedTree:
        """Parse one sentence of words; tags come from the tagger (`taggers`) unless
        given. `budget`: a checked one (`budget`) of `decoder`, or a plain one, checked
        here."""
        if not forms:
            raise BudgetError("a sentence needs at least one word")
        t0 = time.perf_counter()
        budget = self.budget(decoder, budget, tagger)
        named = self.tagging.resolve(tagger)      # what the answer says it used
        c, tagging, budget, tagger = self._view(budget, tagger)
        deadline = deadline_of(budget)            # covers re-tagging and every decoder
        tagged = upos is None or xpos is None
        if tagged:
            upos, xpos, own = tagging.tag_for(forms, tagger, decoder, deadline)
            lemmas = lemmas or own
        tag_seconds = time.perf_counter() - t0
        d = parse_tagged(c, forms, upos, xpos, lemmas, budget,
                         analysed=tagged and tagger == ACCURATE, deadline=deadline)
        feats, agree = d.feats, False
        if feats is None and c.feats is not None:
            feats, agree = c.feats.predict(forms, upos, xpos), True
        elif feats is not None and c.feats is not None and c.config.feats_min_prob > 0:
            feats = mix_feats(feats, d.feats_p, c.feats.predict(forms, upos, xpos),
                              c.config.feats_min_prob)
        stats = dict(d.stats)
        stats["seconds"] = time.perf_counter() - t0
        stats["seconds_per_token"] = stats["seconds"] / len(forms)
        if tagged:               # what tagging (re-tagging included) took of `seconds`
            stats["tagger"] = named
            stats["tag_seconds"] = tag_seconds
        if self.c.analysers > 1 and (stats.get(NEURAL) or (tagged and tagger == ACCURATE)):
            stats["analysers"] = c.analysers        # of the model's ensemble, this parse's
        return assemble(forms, upos, xpos, lemmas, d.heads, d.deprels, feats, offsets,
                        d.score, stats, agree)

    def parse_text(self, text: str, decoder: str = "greedy",
                   budget: Budget | Mapping[str, Any] | None = None, split: bool = True,
                   tagger: str = AUTO) -> list[ParsedTree]:
        """Tokenize (and split, if asked) raw text, then tag and parse each sentence."""
        budget = self.budget(decoder, budget, tagger)
        sents = self.tokenize(text, split)
        out = []
        for a, b in ahead_windows([len(s) for s in sents]):
            self.analyze_ahead([[w.form for w in s] for s in sents[a:b]], tagger, budget)
            out += [self.parse_tokens(s, text, decoder, budget, tagger) for s in sents[a:b]]
        return out

    def parse_tokens(self, words: Sequence, text: str, decoder: str = "greedy",
                     budget: Budget | Mapping[str, Any] | None = None,
                     tagger: str = AUTO) -> ParsedTree:
        """Parse one sentence of `tokenize(text)`, keeping its offsets, spaces and
        multiword tokens."""
        tree = self.parse_words([w.form for w in words], decoder, budget,
                                offsets=[(w.start, w.end) for w in words], tagger=tagger)
        return mark_tokens(tree, words, text)

    def parse_conllu(self, sent: Sentence, decoder: str = "greedy",
                     budget: Budget | Mapping[str, Any] | None = None,
                     gold_tags: bool = False, tagger: str = AUTO) -> ParsedTree:
        """Parse a CoNLL-U sentence in place (HEAD and DEPREL filled); tags from the
        input when gold_tags or the model has no tagger, else from the tagger, and then
        written in place of the input's (UPOS, XPOS, LEMMA, FEATS)."""
        forms = [w.form for w in sent.words]
        if gold_tags or self.c.tagger is None:
            tree = self.parse_words(forms, decoder, budget, upos=[w.upos for w in sent.words],
                                    xpos=[w.xpos for w in sent.words],
                                    lemmas=[w.lemma for w in sent.words])
        else:
            tree = self.parse_words(forms, decoder, budget, tagger=tagger)
            for w, t in zip(sent.words, tree.tokens):      # the tags the parse used
                w.upos, w.xpos, w.lemma, w.feats = t.upos, t.xpos, t.lemma, t.feats
        sent.set_tree([-1] + [t.head for t in tree.tokens], [""] + [t.deprel for t in tree.tokens])
        return tree
