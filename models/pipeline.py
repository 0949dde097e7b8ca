"""A loaded model: text front-end (tokenizer, tagger, lemmatizer) + parsers.

The one object the worker holds per model. It turns raw text, token lists or
CoNLL-U sentences into parsed sentences; it knows no HTTP and no cache.
"""
from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from .conllu import Sentence
from .errors import ModelError
from .graph.decoders import (
    BUDGET_FIELDS,
    DECODER_DEFAULTS,
    DECODERS,
    BudgetError,
    deadline_of,
    remaining_budget,
)
from .graph.model import GraphModel
from .text.agreement import agree_with_subjects
from .registry import resolve

if TYPE_CHECKING:
    from .text.tokenizer import Token

SELECTIONAL = "selectional"  # the transition model's decoder (Choi & McCallum 2013)

logger = logging.getLogger(__name__)


@dataclass
class ParsedToken:
    id: int
    form: str
    lemma: str
    upos: str
    xpos: str
    head: int
    deprel: str
    start: int | None = None   # character offsets into the input text (raw input only)
    end: int | None = None
    feats: str = "_"
    space_after: bool | None = None   # whitespace follows its token (raw input only)


@dataclass
class MultiwordToken:
    """A surface token of several words (ids first..last, 1-based): "don't" = "do" "n't"."""

    first: int
    last: int
    form: str
    start: int
    end: int


@dataclass
class ParsedTree:
    tokens: list[ParsedToken]
    score: float
    stats: dict[str, Any] = field(default_factory=dict)
    multiword: list[MultiwordToken] = field(default_factory=list)


def _digest(files: list[Path]) -> str:
    """First 8 hex digits of the SHA-256 of the files' names and contents."""
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:8]


FAST, ACCURATE = "fast", "accurate"
NEURAL = "neural"   # budget field of the graph decoders: weight of the neural arc scores
NEURAL_MAX = 10.0


class Pipeline:
    def __init__(self, directory: Path, meta: dict, graph: GraphModel, tokenizer=None,
                 tagger=None, lemmatizer=None, feats=None, transition=None,
                 accurate_tagger=None, arc_scorer=None):
        self.directory = directory
        self.meta = meta
        self.graph = graph
        self.tokenizer = tokenizer
        self.tagger = tagger
        self.lemmatizer = lemmatizer
        self.feats = feats
        self.transition = transition
        self.accurate_tagger = accurate_tagger    # linear + neural (`text/neural_tagger.py`)
        self.arc_scorer = arc_scorer              # `graph/neural_arcs.py`, over its inputs

    # ---- identity ------------------------------------------------------------
    @property
    def taggers(self) -> list[str]:
        """The taggers a request may choose: `fast` (the linear tagger, the default)
        and, where the model has one, `accurate` (+ a BiLSTM, ~30 times slower per token)."""
        if self.tagger is None:
            return []
        return [FAST] + ([ACCURATE] if self.accurate_tagger is not None else [])

    @property
    def name(self) -> str:
        return str(self.meta.get("name", self.directory.name))

    @property
    def language(self) -> str:
        return str(self.meta.get("language", "und"))

    @property
    def version(self) -> str:
        v = f"{self.meta.get('version', '0')}+{self.graph.version}"
        if self.transition is not None:
            v += f"+t{self.transition_version}"
        if self.frontend_version:
            v += f"+f{self.frontend_version}"
        if self.arcs_version:    # the weight too: answers with `neural` unset depend on it
            v += f"+a{self.arcs_version}w{self.arc_weight:g}"
        if self.tagger is not None and self.tag_flips.get("flips"):  # answers depend on it
            v += "+r" + hashlib.sha256(json.dumps(self.tag_flips, sort_keys=True)
                                       .encode()).hexdigest()[:4]
        return v

    @property
    def labels(self) -> list[str]:
        return list(self.graph.labels)

    def decoders(self) -> dict[str, dict[str, Any]]:
        """Decoder name -> its budget fields and defaults."""
        out = {name: {"fields": list(BUDGET_FIELDS[name]),
                      "defaults": dict(DECODER_DEFAULTS.get(name, {}))}
               for name in DECODERS}
        if self.arc_scorer is not None:          # null: `arc_weight` with the accurate tagger
            for info in out.values():
                info["fields"].append(NEURAL)
                info["defaults"][NEURAL] = None
        if self.transition is not None:
            from . import transition as transition_model

            out[SELECTIONAL] = {"fields": list(transition_model.BUDGET_FIELDS),
                                "defaults": dict(transition_model.DEFAULTS)}
        return out

    frontend_version = ""
    arcs_version = ""
    # weight of the neural arc scores (`graph/neural_arcs.py`) when a request leaves the
    # graph decoders' `neural` unset and tags with the accurate tagger: on en_ewt dev the
    # best predicted-tag UAS of every graph decoder, within 0.06 (bench/RESULTS.md);
    # pipeline.json "arc_weight" overrides
    arc_weight = 0.3
    # choose_tags: at most `flips` hesitant words (tagger margin < `margin`) re-tagged
    # by the parser, net of `weight` x margin; tuned on en_ewt dev (bench/RESULTS.md).
    # Only for greedy and sampling (+0.5 UAS at 10-20% of their time); mst,
    # selectional and bgi are chosen for speed and it would cost them 30-40%.
    # pipeline.json "tag_flips" overrides, {"flips": 0} turns it off
    tag_flips = {"flips": 4, "margin": 1.0, "weight": 1.0,
                 "decoders": ["greedy", "sampling"]}

    # ---- loading -------------------------------------------------------------
    @classmethod
    def load(cls, name_or_path: str | Path) -> "Pipeline":
        d = resolve(name_or_path)
        meta_path = d / "pipeline.json"
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else {"name": d.name}
        graph_dir = d / meta.get("graph", "graph") if meta_path.exists() else d
        graph = GraphModel.load(graph_dir)
        tokenizer = tagger = lemmatizer = feats = accurate = None
        fe = d / meta.get("frontend", "frontend")
        if fe.is_dir():
            from .text.feats import FeatsGuesser
            from .text.lemmatizer import Lemmatizer
            from .text.tagger import Tagger
            from .text.tokenizer import Tokenizer

            try:
                tokenizer = Tokenizer.load(str(fe / "tokenizer"))
                tagger = Tagger.load(str(fe / "tagger"))
                lemmatizer = Lemmatizer.load(str(fe / "lemmatizer"), tagger.word_classes)
                if (fe / "feats").is_dir():
                    feats = FeatsGuesser.load(str(fe / "feats"))
                if (fe / "neural").is_dir():
                    from .text.neural_tagger import EnsembleTagger, NeuralTagger

                    neural = NeuralTagger.load(str(fe / "neural"))
                    accurate = EnsembleTagger(tagger, neural, neural.meta.get("weight", 6.0))
            except (OSError, ValueError, KeyError) as exc:
                raise ModelError(f"cannot load the front-end of {d}: {exc}") from exc
            if graph.word_classes is not None and graph.word_classes == tagger.word_classes:
                graph.word_classes = tagger.word_classes  # one copy in memory
        arc_scorer = None
        adir = d / meta.get("arcs", "arcs")
        if accurate is None and adir.is_dir():
            logger.warning("%s: the neural arc scorer needs the accurate tagger's inputs "
                           "(frontend/neural); not loaded", d)
        elif adir.is_dir():
            from .graph.neural_arcs import NeuralArcScorer

            try:
                arc_scorer = NeuralArcScorer.load(str(adir), accurate.neural)
            except (OSError, ValueError, KeyError) as exc:
                raise ModelError(f"cannot load the neural arc scorer of {d}: {exc}") from exc
        transition = None
        tdir = d / meta.get("transition", "transition")
        if meta_path.exists() and "transition" in meta and tdir.is_dir():
            from . import transition as transition_model

            transition = transition_model.load(tdir)
        logger.info("loaded model %s from %s (order %d%s%s)", meta.get("name", d.name), d,
                    graph.order, ", with front-end" if tagger else "",
                    ", with transition parser" if transition else "")
        pipe = cls(d, meta, graph, tokenizer, tagger, lemmatizer, feats, transition, accurate,
                   arc_scorer)
        if "tag_flips" in meta:
            pipe.tag_flips = {**cls.tag_flips, **meta["tag_flips"]}
        if "arc_weight" in meta:
            pipe.arc_weight = float(meta["arc_weight"])
        if arc_scorer is not None:
            pipe.arcs_version = _digest(sorted(p for p in adir.rglob("*") if p.is_file()))
        if tagger is not None:       # a retrained front-end changes answers, so the version
            pipe.frontend_version = _digest(sorted(p for p in fe.rglob("*") if p.is_file()))
        if transition is not None:
            pipe.transition_version = hashlib.sha256(
                (tdir / "model.json").read_bytes()).hexdigest()[:8]
        return pipe

    # ---- front-end -----------------------------------------------------------
    def _tagger(self, tagger: str):
        if self.tagger is None:
            raise ModelError(f"model {self.name} has no tagger: send tagged CoNLL-U input")
        if tagger == FAST:
            return self.tagger
        if tagger == ACCURATE and self.accurate_tagger is not None:
            return self.accurate_tagger
        raise BudgetError(f"unknown tagger {tagger!r}; model {self.name} has: "
                          f"{', '.join(self.taggers)}")

    def tag(self, forms: Sequence[str], tagger: str = FAST
            ) -> tuple[list[str], list[str], list[str]]:
        """(upos, xpos, lemmas) from the model's own tagger (`taggers`) and lemmatizer."""
        upos, xpos = self._tagger(tagger).tag(list(forms))
        return list(upos), list(xpos), self._lemmas(forms, upos, xpos)

    def _lemmas(self, forms: Sequence[str], upos: Sequence[str], xpos: Sequence[str]
                ) -> list[str]:
        if self.lemmatizer is None:
            return [f.lower() for f in forms]
        return list(self.lemmatizer.lemmatize(forms, upos, xpos))

    def choose_tags(self, forms: Sequence[str], tagger: str = FAST,
                    deadline: float | None = None) -> tuple[list[str], list[str], list[str]]:
        """(upos, xpos, lemmas) like `tag`, except that where the tagger hesitates the
        parser decides: for the `flips` words of smallest margin below `margin`, in
        that order, the second-best tag is kept when the first-order MST tree it gives
        (over the arcs pruning keeps for the tagger's tags) scores higher under the
        first-order (pruning) model, net of `weight` x the tagger's margin (a light
        joint tagging-parsing step, cf. Bohnet & Nivre 2012; bench/RESULTS.md). No word
        is tried once `deadline` (time.monotonic()) has passed."""
        flips, tau, lam = (self.tag_flips.get(k) for k in ("flips", "margin", "weight"))
        if self.tagger is None or not flips or self.graph.pruner is None:
            return self.tag(forms, tagger)
        chosen = self._tagger(tagger)

        def tags(cls) -> tuple[list[str], list[str], list[str]]:
            up = [chosen.classes[c][0] for c in cls]
            xp = [chosen.classes[c][1] for c in cls]
            return up, xp, self._lemmas(forms, up, xp)

        best, second, margin = chosen.alternatives(list(forms))
        order = [int(i) for i in np.argsort(margin, kind="stable")[:flips] if margin[i] < tau]
        if not order:                # the tagger's own tags (best is its argmax), not re-run
            return tags(best)

        def score(cls, allowed=None):
            up, xp, lem = tags(cls)
            return self.graph.first_order_best(self.graph.encode(forms, lem, up, xp), allowed)

        cur = best.copy()
        cur_score, allowed = score(cur)        # the variants are scored on the same arcs
        for i in order:
            if deadline is not None and time.monotonic() >= deadline:
                break
            alt = cur.copy()
            alt[i] = second[i]
            s = score(alt, allowed)[0] - lam * float(margin[i])
            if s > cur_score:
                cur, cur_score = alt, s
        return tags(cur)

    def tokenize(self, text: str, split: bool = True, limit: int | None = None
                 ) -> list[list[Token]]:
        """Sentences of the words of raw text (`text.tokenizer.Token`: form, offsets,
        multiword token, space after); with `limit`, tokenizing stops past `limit`
        tokens (see `Tokenizer.tokenize_sentence`)."""
        if self.tokenizer is None:
            raise ModelError(f"model {self.name} has no tokenizer: send pre-tokenized input")
        if split:
            sents = self.tokenizer.tokenize(text, limit)
        else:
            sents = [self.tokenizer.tokenize_sentence(text, limit)]
        return [s for s in sents if s]

    # ---- parsing -------------------------------------------------------------
    def parse_words(self, forms: Sequence[str], decoder: str = "greedy",
                    budget: dict | None = None, *, upos: Sequence[str] | None = None,
                    xpos: Sequence[str] | None = None, lemmas: Sequence[str] | None = None,
                    offsets: Sequence[tuple[int, int]] | None = None,
                    tagger: str = FAST) -> ParsedTree:
        """Parse one sentence of words; tags come from the tagger (`taggers`) unless
        given."""
        if not forms:
            raise BudgetError("a sentence needs at least one word")
        t0 = time.perf_counter()
        # issue 20: the budget's deadline covers every stage below (re-tagging, the
        # ensemble's other parser, the decoder), each given what is left of it
        deadline = deadline_of(budget or {})
        tagged = upos is None or xpos is None
        if tagged:
            if decoder in self.tag_flips.get("decoders", ()):
                upos, xpos, tagged_lemmas = self.choose_tags(forms, tagger, deadline)
            else:
                upos, xpos, tagged_lemmas = self.tag(forms, tagger)
            lemmas = lemmas or tagged_lemmas
        tag_seconds = time.perf_counter() - t0
        budget = dict(budget or {})
        neural = budget.pop(NEURAL, None)
        if decoder == SELECTIONAL:
            if neural is not None:
                raise BudgetError(f"{NEURAL} applies to the graph decoders only")
            if self.transition is None:
                raise BudgetError(f"model {self.name} has no transition parser: decoder "
                                  f"'{SELECTIONAL}' is not available")
            from . import transition as transition_model

            heads, deprels, score, dstats = transition_model.decode(
                self.transition, list(forms), list(lemmas) if lemmas else None, list(upos),
                list(xpos), {**budget, **remaining_budget(deadline)})
        else:
            if decoder == "bgi" and (budget or {}).get("ensemble_with") == SELECTIONAL \
                    and self.transition is not None:
                # the ensemble's other parser (Tchernowitz et al. 2016, Section 7)
                from . import transition as transition_model

                other, _, _, _ = transition_model.decode(
                    self.transition, list(forms), list(lemmas) if lemmas else None,
                    list(upos), list(xpos), remaining_budget(deadline))
                budget = {**budget, "ensemble_heads": [int(h) for h in other]}
            t1 = time.perf_counter()
            weight = self._arc_weight(neural, tagger if tagged else None)
            bonus = None if not weight else self.arc_scorer.arc_bonus(
                forms, self.tagger.type_strings, weight)
            arc_seconds = time.perf_counter() - t1
            res = self.graph.parse(forms, upos, xpos, lemmas, decoder,
                                   {**budget, **remaining_budget(deadline)}, bonus)
            heads, deprels, score, dstats = res.heads, res.deprels, res.score, res.stats
            dstats = {**dstats, NEURAL: weight}
            if weight:
                dstats["neural_seconds"] = arc_seconds
        feats = ["_"] * len(forms)
        if self.feats:
            feats = agree_with_subjects(self.feats.predict(forms, upos, xpos), heads, deprels,
                                        forms, lemmas, xpos)
        toks = []
        for i, f in enumerate(forms):
            start, end = offsets[i] if offsets else (None, None)
            toks.append(ParsedToken(i + 1, f, lemmas[i] if lemmas else "_", upos[i], xpos[i],
                                    int(heads[i]), deprels[i], start, end, feats[i]))
        stats = dict(dstats)
        stats["seconds"] = time.perf_counter() - t0
        stats["seconds_per_token"] = stats["seconds"] / len(forms)
        if tagged:               # what tagging (re-tagging included) took of `seconds`
            stats["tagger"] = tagger
            stats["tag_seconds"] = tag_seconds
        return ParsedTree(toks, float(score), stats)

    def _arc_weight(self, neural: Any, tagger: str | None) -> float:
        """The weight of the neural arc scores: the budget's `neural` if set, else
        `arc_weight` when the accurate tagger tagged the sentence, else 0 (off)."""
        if neural is None:
            return self.arc_weight if tagger == ACCURATE and self.arc_scorer is not None \
                else 0.0
        if isinstance(neural, bool) or not isinstance(neural, (int, float)) \
                or not 0.0 <= neural <= NEURAL_MAX:
            raise BudgetError(f"{NEURAL} must be a number in [0, {NEURAL_MAX:g}], "
                              f"got {neural!r}")
        if neural and self.arc_scorer is None:
            raise BudgetError(f"model {self.name} has no neural arc scorer: {NEURAL} "
                              "must be 0 or unset")
        return float(neural)

    def parse_text(self, text: str, decoder: str = "greedy", budget: dict | None = None,
                   split: bool = True, tagger: str = FAST) -> list[ParsedTree]:
        """Tokenize (and split, if asked) raw text, then tag and parse each sentence."""
        return [self.parse_tokens(sent, text, decoder, budget, tagger)
                for sent in self.tokenize(text, split)]

    def parse_tokens(self, words: Sequence[Token], text: str, decoder: str = "greedy",
                     budget: dict | None = None, tagger: str = FAST) -> ParsedTree:
        """Parse one sentence of `tokenize(text)`, keeping its offsets, spaces and
        multiword tokens."""
        tree = self.parse_words([w.form for w in words], decoder, budget,
                                offsets=[(w.start, w.end) for w in words], tagger=tagger)
        for tok, w in zip(tree.tokens, words):
            tok.space_after = w.space_after
        i = 0
        while i < len(words):
            span = words[i].mwt
            j = i
            while span is not None and j + 1 < len(words) and words[j + 1].mwt == span:
                j += 1
            if j > i:
                tree.multiword.append(MultiwordToken(i + 1, j + 1, text[span[0]:span[1]],
                                                     span[0], span[1]))
            i = j + 1
        return tree

    def parse_conllu(self, sent: Sentence, decoder: str = "greedy", budget: dict | None = None,
                     gold_tags: bool = False, tagger: str = FAST) -> ParsedTree:
        """Parse a CoNLL-U sentence in place (HEAD and DEPREL filled); tags from the
        input when gold_tags or the model has no tagger, else from the tagger, and then
        written in place of the input's (UPOS, XPOS, LEMMA, FEATS)."""
        forms = [w.form for w in sent.words]
        if gold_tags or self.tagger is None:
            tree = self.parse_words(forms, decoder, budget, upos=[w.upos for w in sent.words],
                                    xpos=[w.xpos for w in sent.words],
                                    lemmas=[w.lemma for w in sent.words])
        else:
            tree = self.parse_words(forms, decoder, budget, tagger=tagger)
            for w, t in zip(sent.words, tree.tokens):
                w.upos, w.xpos, w.lemma, w.feats = t.upos, t.xpos, t.lemma, t.feats
        sent.set_tree([-1] + [t.head for t in tree.tokens], [""] + [t.deprel for t in tree.tokens])
        return tree
