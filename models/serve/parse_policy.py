"""How one tagged sentence is parsed: which scores, which decoder, where relations
come from.

The four graph decoders search the graph model's trees; the neural analyser's arc
log-probabilities, times the budget field `neural` (unset: the model's calibrated
`arc_weight` when the analyser ran for the accurate tagger, else 0), are added to
the graph model's arc scores (`GraphModel.scorer`), and when the analyser ran the
relations of the tree come from its relation classifier (Dozat & Manning 2017,
Section 2.3), plus the model's calibrated share (`label_mix`) of the graph
labeler's scores, which see the tree around the arc.
`selectional` is the transition parser; with the analyser its `neural` is the power
of the analyser's arc probabilities in each move's probability (unset: SELECTIONAL_POWER
with the accurate tagger, else 0; `transition.decode.with_arc_probs`), and its
relations come from the analyser as the graph decoders' do. bgi's `ensemble_with:
selectional` first runs it, the same way, for bgi's bias tree (Tchernowitz et al.
2016, Section 7).
Where the model averages several analysers, every decoder also has the field
`analysers`: how many of them the accurate tagger and the arc and relation scores
use (fewer: faster, a little less accurate).
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from models.decoder_registry import DECODERS
from models.decoders import Budget, BudgetError, DecoderSpec, Field, find, remaining_budget
from models.relation_rules import best_relations, breaks_limits, rule_masks
from models.serve.components import Components

SELECTIONAL = "selectional"  # the transition model's decoder (Choi & McCallum 2013)
NEURAL = "neural"            # budget field of the graph decoders: weight of the arc scores
NEURAL_FIELD = Field(NEURAL, "number", None, "weight of the neural analyser's arc scores "
                     "(0: off; unset: the model's arc_weight with the accurate tagger, else "
                     "off)", lo=0, hi=10.0, nullable=True)
SELECTIONAL_POWER = 0.5      # selectional's `neural` unset, accurate tagger: dev UAS/LAS
                             # (bench/journal/06-selectional.md,
                             # "selectional with the analyser")
SELECTIONAL_NEURAL_FIELD = Field(
    NEURAL, "number", None, "power of the neural analyser's arc probabilities in each "
    f"move's probability (0: off; unset: {SELECTIONAL_POWER:g} with the accurate tagger, "
    "else off)", lo=0, hi=10.0, nullable=True)
ANALYSERS = "analysers"      # budget field of every decoder of a model with an ensemble
KEEP_LOGP = float(np.log(0.01))   # arcs the analyser gives at least this probability are
                                  # searched even where the graph model's pruner drops them


@dataclass
class Decision:
    heads: list[int]               # head of words 1..n
    deprels: list[str]
    score: float
    stats: dict[str, Any] = field(default_factory=dict)
    feats: list[str] | None = None  # the analyser's FEATS, when it ran
    feats_p: np.ndarray | None = None  # and the probability it gives each word's


def analysers_field(n: int) -> Field:
    """The field `analysers` of a model that averages n analysers."""
    return Field(ANALYSERS, "int", None, f"how many of the model's {n} neural analysers "
                 "the accurate tagger and the neural scores average (1: the first alone, "
                 "faster; unset: all)", lo=1, hi=n, nullable=True)


def specs(c: Components, own: Mapping[str, Mapping[str, Any]] | None = None
          ) -> dict[str, DecoderSpec]:
    """The decoders of the model's parts (registry order), with the model's own
    defaults (pipeline.json `decoder_defaults`, or `own`), where the model has the
    neural analyser the decoders' field `neural`, and where it has several, every
    decoder's field `analysers`."""
    own = c.config.decoder_defaults if own is None else own
    ensemble = (analysers_field(c.analysers),) if c.analysers > 1 else ()
    out = {}
    for spec in DECODERS.values():
        if getattr(c, spec.component, None) is not None:
            extra = (neural_field(spec.component),) if c.analyser else ()
            out[spec.name] = spec.with_fields((*extra, *ensemble), own.get(spec.name))
    return out


def check_budget(c: Components, decoder: str, budget: Mapping[str, Any] | None = None,
                 own: Mapping[str, Mapping[str, Any]] | None = None) -> Budget:
    """The one check of a request's budget that the gateway has not checked (a job of
    the Python API or `deptree parse`): the decoder's name against the model's decoders
    (`specs`, with defaults `own`), each field the budget sets against its bounds, the
    defaults for the rest. `neural` 0 or unset is a budget of a model without the
    analyser too."""
    spec = find(decoder, specs(c, own))
    budget = dict(budget or {})
    if NEURAL in budget and NEURAL not in spec.names:
        if neural_field(spec.component).check(budget.pop(NEURAL)):
            raise BudgetError(f"model {c.config.name} has no neural analyser: {NEURAL} must "
                              "be 0 or unset")
    if ANALYSERS in budget and ANALYSERS not in spec.names:
        raise BudgetError(f"model {c.config.name} does not average several neural "
                          f"analysers: {ANALYSERS} does not apply", "field_not_applicable",
                          value=ANALYSERS)
    return spec.budget(budget)


def take_analysers(c: Components, budget: Mapping[str, Any] | None
                   ) -> tuple[Components, Mapping[str, Any]]:
    """The parts a request's `analysers` asks for (`Components.with_analysers`) and its
    budget: a `Budget` as it is (its field was checked), a plain one (the look-ahead's
    of a library caller) without that field; BudgetError for a count the model does not
    have."""
    if isinstance(budget, Budget):
        k = budget.get(ANALYSERS)
        return (c, budget) if k is None else (c.with_analysers(k), budget)
    budget = dict(budget or {})
    k = budget.pop(ANALYSERS, None)
    if k is None:
        return c, budget
    if c.analysers < 2:
        raise BudgetError(f"model {c.config.name} does not average several neural "
                          f"analysers: {ANALYSERS} does not apply", "field_not_applicable",
                          value=ANALYSERS)
    return c.with_analysers(analysers_field(c.analysers).check(k)), budget


def decoders(c: Components) -> dict[str, dict[str, Any]]:
    """Decoder name -> its spec as JSON (`DecoderSpec.describe`: fields, defaults,
    params)."""
    return {name: spec.describe() for name, spec in specs(c).items()}


# The analyser keeps its last RECENT (64) analyses: a window of sentences analysed as
# one batch must still be there when they are parsed, and short enough that a job can
# stop between windows (its deadline passed, its client left) instead of analysing all
# of a long text first. A job analyses each window in chunks of at most
# AHEAD_CHUNK_TOKENS words (`ahead_chunks`; a longer sentence is a chunk of its own)
# and checks between them whether anyone still waits (issue 61, defect 1: a window of
# 2,048 words took seconds, 8 x 250 words 8 s, past any deadline; batches of long
# sentences cost more per word than one at a time, so the chunks lose nothing).
AHEAD_SENTENCES = 32
AHEAD_TOKENS = 2048
AHEAD_CHUNK_TOKENS = 256


def ahead_windows(lengths: Sequence[int]) -> list[tuple[int, int]]:
    """Consecutive [start, end) windows over sentences of these lengths, each of at
    most AHEAD_SENTENCES sentences and, unless one sentence is longer, AHEAD_TOKENS
    words: the batches `analyze_ahead` is called with while a job is parsed."""
    return _runs(lengths, AHEAD_TOKENS, AHEAD_SENTENCES)


def ahead_chunks(lengths: Sequence[int], tokens: int = AHEAD_CHUNK_TOKENS
                 ) -> list[tuple[int, int]]:
    """Consecutive [start, end) chunks over sentences of these lengths (one window),
    each of at most `tokens` words unless one sentence is longer: the batches a job
    analyses one at a time, checking its deadline and its client between them."""
    return _runs(lengths, tokens, len(lengths) + 1)


def _runs(lengths: Sequence[int], tokens: int, sentences: int) -> list[tuple[int, int]]:
    """Consecutive [start, end) runs of at most `sentences` sentences and, unless one
    sentence is longer, `tokens` words."""
    out: list[tuple[int, int]] = []
    start, n = 0, 0
    for i, k in enumerate(lengths):
        if i > start and (i - start == sentences or n + k > tokens):
            out.append((start, i))
            start, n = i, 0
        n += k
    if start < len(lengths):
        out.append((start, len(lengths)))
    return out


def analyze_ahead(c: Components, sentences: Sequence[Sequence[str]], accurate: bool,
                  budget: dict | None = None) -> None:
    """Run the neural analyser over the sentences of a job as one batch (faster per
    word), when their parse will use it (the accurate tagger, or a `neural` weight);
    their parses then find it in the analyser's cache."""
    if c.analyser is not None and sentences and (accurate or (budget or {}).get(NEURAL)):
        c.analyser.analyze_batch([list(s) for s in sentences if s])


def ahead_costs(c: Components, sentences: Sequence[Sequence[str]], accurate: bool,
                budget: dict | None = None) -> list[int]:
    """The work `analyze_ahead` does on each sentence, in the unit its time follows: the
    contextual encoder's subword pieces where the analyser reads one (a word of many
    pieces costs 3 to 5 times an ordinary one: a job that judged 250 such words by a
    pace per ordinary word ran 1 s past a 1 ms deadline), else words. The pieces are
    the ones the analysis itself then finds in the encoder's cache. A sentence the
    analyser holds already (`held`: another decoder's request for the same words) costs
    nothing: counted at its words, such a job timed 2,000 words in 0.00 s, the next
    late job took that for the analyser's pace, analysed a 250-word sentence and
    parsed it before it learnt it could not end, and the workers stayed busy 1.24 s
    after a 1 ms deadline (CI, 2026-12-03)."""
    if not (accurate or (budget or {}).get(NEURAL)) or c.analyser is None:
        return [len(s) for s in sentences]
    held = c.analyser.held(sentences)
    context = getattr(c.analyser, "context", None)
    return [0 if h else len(s) if context is None
            else sum(len(p) for p in context.subwords.word_pieces(list(s)))
            for s, h in zip(sentences, held)]


def neural_field(component: str) -> Field:
    """The budget field `neural` of a component's decoders."""
    return SELECTIONAL_NEURAL_FIELD if component == "transition" else NEURAL_FIELD


def arc_weight(c: Components, neural: float | None, analysed: bool,
               component: str = "graph") -> float:
    """The weight of the analyser's arc scores: the budget's `neural` (checked) if set,
    else, when the analyser ran for the tags, the model's `arc_weight` (graph decoders)
    or SELECTIONAL_POWER (selectional), else 0 (off)."""
    if neural is None:
        if not analysed or c.analyser is None:
            return 0.0
        return SELECTIONAL_POWER if component == "transition" else c.config.arc_weight
    if neural and c.analyser is None:
        raise BudgetError(f"model {c.config.name} has no neural analyser: {NEURAL} must be "
                          "0 or unset")
    return float(neural)


def _transition(c: Components, forms, lemmas, upos, xpos, budget: Mapping[str, Any],
                analysis=None, power: float = 0.0):
    """selectional's parse: with the request's `Budget`, or bgi's partner's own budget
    (a plain one: its deadline, checked by the spec)."""
    if c.transition is None:
        raise BudgetError(f"model {c.config.name} has no transition parser: decoder "
                          f"'{SELECTIONAL}' is not available")
    arc_p = c.analyser.arc_probs(analysis) if analysis is not None and power else None
    return DECODERS[SELECTIONAL](c.transition, budget, list(forms),
                                 list(lemmas) if lemmas else None, list(upos), list(xpos),
                                 arc_p=arc_p, power=power)


def parse_tagged(c: Components, forms: Sequence[str], upos: Sequence[str],
                 xpos: Sequence[str], lemmas: Sequence[str] | None, budget: Budget,
                 analysed: bool, deadline: float | None = None) -> Decision:
    """Decode one tagged sentence with a checked budget (`check_budget`, or the
    gateway's) of its decoder; `analysed`: the analyser ran for its tags (the accurate
    tagger), so its scores come at no extra cost. `deadline` (time.monotonic()) bounds
    the partner decoder and the decoder together."""
    spec, decoder = budget.spec, budget.decoder
    weight = arc_weight(c, budget.get(NEURAL), analysed, spec.component)
    t0 = time.perf_counter()
    analysis = c.analyser.analyze(list(forms)) if weight else None
    arc_seconds = time.perf_counter() - t0
    enc = None                       # the graph model's encoding, once something needs it
    if spec.component == "transition":
        heads, deprels, score, stats = _transition(c, forms, lemmas, upos, xpos,
                                                   budget.replace(remaining_budget(deadline)),
                                                   analysis, weight)
        d = Decision([int(h) for h in heads], list(deprels), float(score),
                     {**stats, NEURAL: weight})
    else:
        partner = None
        if budget.get("ensemble_with") == SELECTIONAL and c.transition is not None:
            power = SELECTIONAL_POWER if analysis is not None else 0.0
            partner = [int(h) for h in _transition(c, forms, lemmas, upos, xpos,
                                                   remaining_budget(deadline), analysis,
                                                   power)[0]]
        bonus = extra = None
        if analysis is not None:
            t0 = time.perf_counter()
            bonus = c.analyser.arc_bonus(analysis, weight)
            extra = analysis.arc_logp >= KEEP_LOGP
            arc_seconds += time.perf_counter() - t0
        enc = c.graph.encode(forms, lemmas, upos, xpos)
        res = c.graph.decode(enc, decoder, budget.replace(remaining_budget(deadline)),
                             bonus, extra, partner, c.config.confidence_temperature)
        own = analysis is None or c.config.label_mix is None   # the graph labeler's relations
        d = Decision([int(h) for h in res.heads[1:]],
                     c.graph.label(enc, res.heads) if own else [], res.score,
                     {**res.stats, NEURAL: weight})
    if analysis is not None:
        d.stats["neural_seconds"] = arc_seconds
        if c.config.label_mix is not None:
            graph = None
            if c.config.label_mix:
                if enc is None:
                    enc = c.graph.encode(forms, lemmas, upos, xpos)
                graph = c.graph.label_scores(enc, np.array([-1] + list(d.heads)))
            d.deprels = relations(c, analysis, d.heads, graph, c.config.label_mix)
        d.feats, d.feats_p = analyser_feats(c, analysis)
    return d


def analyser_feats(c: Components, analysis) -> tuple[list[str], np.ndarray]:
    """The analyser's FEATS of each word, and the probability it gives them."""
    return ([c.analyser.vocab.feats[i] for i in analysis.feats_logp.argmax(1)],
            np.exp(analysis.feats_logp.max(1)))


def mix_feats(own: Sequence[str], prob: Sequence[float], guessed: Sequence[str],
              min_prob: float) -> list[str]:
    """Each word's FEATS: the analyser's (`own`) where it gives them at least `min_prob`,
    the front-end guesser's below (calibration's `feats_min_prob`)."""
    return [o if p >= min_prob else g for o, p, g in zip(own, prob, guessed, strict=True)]


def relations(c: Components, analysis, heads: Sequence[int], graph: np.ndarray | None = None,
              mix: float = 0.0) -> list[str]:
    """The most likely relation of each arc by the analyser's log-probabilities plus mix x
    the graph labeler's scores `graph` ([n, graph labels], or None): `root` for the word
    attached to the root and for no other, and one subject and one object a head at most
    (as UD requires; `relation_rules`)."""
    labels = c.analyser.labels
    scores = c.analyser.label_logp(analysis, heads).astype(np.float64)
    if graph is not None and mix:
        graph = np.concatenate([graph, np.zeros((len(graph), 1))], axis=1)
        scores = scores + mix * graph[:, graph_columns(c)]
    if "root" in labels:
        scores[:, labels.index("root")] = -np.inf
    best, masks = scores.argmax(1), rule_masks(tuple(labels))
    if breaks_limits(best, heads, *masks):        # two subjects or objects of one head
        best = best_relations(scores, heads, *masks)
    return ["root" if h == 0 else labels[b] for h, b in zip(heads, best)]


def graph_columns(c: Components) -> np.ndarray:
    """For each of the analyser's relations, its column among the graph labeler's (a
    relation the graph model lacks reads the column after them, of zeros)."""
    own = {lab: i for i, lab in enumerate(c.graph.labels)}
    return np.array([own.get(lab, len(own)) for lab in c.analyser.labels])
