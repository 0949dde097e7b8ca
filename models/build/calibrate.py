"""Calibration of a built model on its development set: how the pipeline mixes its parts.

Five settings of `pipeline.json`, each chosen by its figure on dev with the
model's own tags: `tag_weight`, the divisor of the analyser's tag log-probabilities
in the accurate tagger (best UPOS + XPOS accuracy); `arc_weight`, the weight of the
analyser's arc scores in the graph decoders when a request leaves `neural` unset,
and `label_mix`, the share of the graph labeler's scores beside the analyser's
relation log-probabilities (null: the graph labeler alone), both by the best UAS +
LAS of greedy at its default budget; and whether the parser re-tags hesitant words
(`tag_flips`), by UAS + LAS + UPOS: tuned with the linear tagger, it can cost the
accurate one more tags than it wins arcs; and below which probability of the
analyser's FEATS the front-end guesser's stand instead (`feats_min_prob`, by FEATS
accuracy): the guesser knows endings and wins on some agglutinative treebanks. A
treebank the graph model learns well gets a small arc weight; a small one, where the
linear model has seen little, a large one.
"""
from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import numpy as np

from models.conllu import read_conllu
from models.neural.tagger import AnalyserTagger
from models.progress import progress_bar
from models.serve.components import load_components
from models.serve.parse_policy import (
    analyser_feats,
    check_budget,
    mix_feats,
    parse_tagged,
    relations,
)
from models.serve.tagging import ACCURATE, Tagging

logger = logging.getLogger(__name__)

TAG_WEIGHTS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
ARC_WEIGHTS = (0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 4.0, 10.0)
LABEL_MIXES = (0.0, 0.02, 0.05, 0.1, 0.2, 0.5, None)     # None: the graph labeler alone
FEATS_MIN_PROBS = (0.0, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1.01)   # 1.01: the guesser's alone
CONVERGE = (5, 10)             # greedy's `converge` tried below its default
CONVERGE_TOLERANCE = 0.05      # points of UAS + LAS a faster default may cost
CONFIDENCE_TEMPERATURES = (1.0, 1.6, 2.5, 4.0, 6.0, 9.0)   # greedy confidence's arcs'
CONFIDENCE_SENTENCES = 300     # of dev they are fitted on (the first)
CHUNK = 64                     # sentences analysed as one batch
MAX_WORDS = 10_000             # of dev parsed per setting (the first sentences)


def _dev(dev_path: Path) -> list:
    dev, words = [], 0
    for s in read_conllu(dev_path):
        if s.words and words < MAX_WORDS:
            dev.append(s)
            words += len(s.words)
    return dev


def _tag_weight(c, forms: list[list[str]], gold_tags: list[list[tuple]]) -> tuple[float, dict]:
    """The divisor of the analyser's tag log-probabilities with the best UPOS + XPOS."""
    classes = c.tagger.classes
    lin, neu = [], []
    for k in range(0, len(forms), CHUNK):
        for f, a in zip(forms[k:k + CHUNK], c.analyser.analyze_batch(forms[k:k + CHUNK])):
            lin.append(c.tagger.scores(f))
            neu.append(a.tag_logp)
    upos = np.array([u for u, _ in classes] + [None])
    xpos = np.array([x for _, x in classes] + [None])
    gold_u = np.array([u for s in gold_tags for u, _ in s])
    gold_x = np.array([x for s in gold_tags for _, x in s])
    lin_all, neu_all = np.concatenate(lin), np.concatenate(neu)
    table = {}
    for w in TAG_WEIGHTS:
        pred = (lin_all + neu_all / w).argmax(1)
        table[w] = (round(100 * float(np.mean(upos[pred] == gold_u)), 2),
                    round(100 * float(np.mean(xpos[pred] == gold_x)), 2))
    best = max(TAG_WEIGHTS, key=lambda w: (sum(table[w]), w))
    return best, table


def calibrate(model_dir: Path, dev_path: Path, contextual: bool = False) -> dict:
    """The settings (and the figures they were chosen by) for model_dir's
    pipeline.json; without an analyser, an empty dict (the defaults). With
    `contextual`, those of the contextual analyser (`Components.with_contextual`:
    pipeline.json's `contextual_settings`)."""
    c = load_components(model_dir)
    if contextual:
        if c.contextual is None or c.tagger is None:
            return {}
        c = c.with_contextual()
    if c.analyser is None or c.tagger is None:
        return {}
    dev = _dev(dev_path)
    forms = [[w.form for w in s.words] for s in dev]
    tag_weight, tag_table = _tag_weight(c, forms, [[(w.upos, w.xpos) for w in s.words]
                                                   for s in dev])
    logger.info("calibration: tag weight %g (UPOS %.2f, XPOS %.2f)", tag_weight,
                *tag_table[tag_weight])
    c.config = replace(c.config, tag_weight=tag_weight)
    c.accurate = AnalyserTagger(c.tagger, c.analyser, tag_weight)
    tagging = Tagging(c)
    right = {(w, m): np.zeros(2) for w in ARC_WEIGHTS for m in LABEL_MIXES}
    words = 0
    plain_tags: list[tuple] = []           # the tagger's own tags, and the gold UPOS
    own_feats: list[tuple] = []            # the analyser's FEATS and their probabilities
    upos_right = 0
    bar = progress_bar(len(forms), "calibration", "sent")
    for k in range(0, len(dev), CHUNK):
        c.analyser.analyze_batch(forms[k:k + CHUNK])
        for s, f in zip(dev[k:k + CHUNK], forms[k:k + CHUNK]):
            up, xp, lem = tagging.tag_for(f, ACCURATE, "greedy")
            plain_tags.append(tagging.tag(f, ACCURATE))
            upos_right += sum(u == w.upos for u, w in zip(up, s.words))
            gh = np.array([w.head for w in s.words])
            gr = np.array([w.deprel for w in s.words])
            words += len(f)
            analysis = c.analyser.analyze(f)
            own_feats.append(analyser_feats(c, analysis))
            enc = c.graph.encode(f, lem, up, xp)
            for w in ARC_WEIGHTS:
                heads = parse_tagged(c, f, up, xp, lem,
                                     check_budget(c, "greedy", {"neural": w}),
                                     analysed=True).heads
                ok = np.array(heads) == gh
                tree = np.array([-1] + list(heads))
                graph = c.graph.label_scores(enc, tree)
                for m in LABEL_MIXES:
                    rels = (c.graph.label(enc, tree) if m is None
                            else relations(c, analysis, heads, graph, m))
                    right[(w, m)] += (ok.sum(), (ok & (np.array(rels) == gr)).sum())
            bar.update(1)
    bar.close()
    table = {f"{w:g}/{'graph' if m is None else f'{m:g}'}": [round(100 * x / words, 2)
                                                           for x in r]
             for (w, m), r in right.items()}
    (w, m), best = max(right.items(), key=lambda kv: (kv[1].sum(), -kv[0][0]))
    logger.info("calibration: arc weight %g, label mix %s (UAS %.2f, LAS %.2f)", w,
                "graph labeler" if m is None else f"{m:g}", *(100 * best / words))
    c.config = replace(c.config, arc_weight=w, label_mix=m)
    with_flips = [*best, upos_right]
    without = _without_flips(c, dev, forms, plain_tags, w, m)
    flips = c.config.tag_flips.flips if sum(with_flips) > sum(without) else 0
    logger.info("calibration: re-tagging %s (UAS+LAS+UPOS words %d with, %d without)",
                "on" if flips else "off", sum(with_flips), sum(without))
    c.config = replace(c.config, tag_flips=replace(c.config.tag_flips, flips=flips))
    tags = [Tagging(c).tag_for(f, ACCURATE, "greedy") for f in forms] if flips else plain_tags
    baseline = sum(best) if flips else sum(without[:2])
    converge, by_converge = None, {}
    for n in CONVERGE:                       # the smallest that costs almost nothing
        got = _parsed(c, dev, forms, tags, w, {"converge": n})
        by_converge[n] = [round(100 * x / words, 2) for x in got]
        if sum(got) >= baseline - CONVERGE_TOLERANCE / 100 * words:
            converge = n
            break
    logger.info("calibration: greedy converge %s", converge or "default")
    budget = {"converge": converge} if converge else {}
    temperature, by_temperature = _confidence_temperature(c, dev, forms, tags, w, budget)
    logger.info("calibration: greedy confidence's arc temperature %g (ECE %.4f)",
                temperature, by_temperature[temperature])
    feats_right = _feats_right(c, dev, forms, tags, own_feats)
    feats_min_prob = max(feats_right, key=lambda t: (feats_right[t], -t))
    logger.info("calibration: the analyser's FEATS from probability %g, the guesser's "
                "below (%.2f%% right; %.2f%% with the analyser's alone)", feats_min_prob,
                100 * feats_right[feats_min_prob] / words, 100 * feats_right[0.0] / words)
    return {"tag_weight": tag_weight, "arc_weight": w, "label_mix": m,
            "tag_flips": {"flips": flips}, "feats_min_prob": feats_min_prob,
            "decoder_defaults": {"greedy": {"converge": converge}} if converge else {},
            "confidence_temperature": temperature,
            "calibration": {"dev_words": words,
                            "greedy_confidence_ece": {f"{k:g}": round(v, 4)
                                                      for k, v in by_temperature.items()},
                            "tags": {f"{k:g}": v for k, v in tag_table.items()},
                            "greedy_uas_las": table,
                            "greedy_converge_uas_las": by_converge,
                            "feats": {f"{k:g}": round(100 * v / words, 2)
                                      for k, v in feats_right.items()},
                            "retagging_uas_las_upos": {
                                "on": [round(100 * x / words, 2) for x in with_flips],
                                "off": [round(100 * x / words, 2) for x in without]}}}


def _without_flips(c, dev, forms, plain_tags, w: float, m: float | None) -> list[int]:
    """Words with the right head, head and relation, and UPOS when greedy parses the
    accurate tagger's own tags (no re-tagging) with arc weight w (label mix m is the
    config's)."""
    uas_las = _parsed(c, dev, forms, plain_tags, w, {})
    upos = sum(u == x.upos for (up, _, _), s in zip(plain_tags, dev) for u, x in zip(up, s.words))
    return [*uas_las, upos]


def _parsed(c, dev, forms, tags, w: float, budget: dict) -> list[int]:
    """Words with the right head, and head and relation, when greedy parses the given
    tags with arc weight w and the budget."""
    out = np.zeros(2, np.int64)
    for k in range(0, len(dev), CHUNK):
        c.analyser.analyze_batch(forms[k:k + CHUNK])
        for s, f, (up, xp, lem) in zip(dev[k:k + CHUNK], forms[k:k + CHUNK], tags[k:k + CHUNK]):
            d = parse_tagged(c, f, up, xp, lem,
                             check_budget(c, "greedy", {"neural": w, **budget}),
                             analysed=True)
            ok = np.array(d.heads) == np.array([x.head for x in s.words])
            rels = np.array(d.deprels) == np.array([x.deprel for x in s.words])
            out += (ok.sum(), (ok & rels).sum())
    return [int(x) for x in out]


def _confidence_temperature(c, dev, forms, tags, w: float, budget: dict
                            ) -> tuple[float, dict[float, float]]:
    """The temperature of greedy confidence's first-order arcs (with the analyser's
    scores at weight w) whose confidences have the least expected calibration error
    over the first CONFIDENCE_SENTENCES sentences, and the ECE of each: the analyser's
    arc scores set how sure the arcs are (at en_ewt v6's 1.6 its contextual analyser's
    default request had an ECE of 0.070, its accurate one's 0.014)."""
    from models.graph.confidence import GREEDY_NEURAL_ARC_TEMPERATURE, expected_calibration_error

    n = min(CONFIDENCE_SENTENCES, len(dev))
    conf = {t: [] for t in CONFIDENCE_TEMPERATURES}
    right: list[bool] = []
    for k in range(0, n, CHUNK):
        e = min(n, k + CHUNK)
        c.analyser.analyze_batch(forms[k:e])
        for s, f, (up, xp, lem) in zip(dev[k:e], forms[k:e], tags[k:e]):
            for t in CONFIDENCE_TEMPERATURES:     # the same search: only the arcs' differ
                c.config = replace(c.config, confidence_temperature=t)
                d = parse_tagged(c, f, up, xp, lem, check_budget(
                    c, "greedy", {"neural": w, "confidence": True, **budget}), analysed=True)
                conf[t] += d.stats["confidence"]
            right += [h == x.head for h, x in zip(d.heads, s.words)]
    ece = {t: expected_calibration_error(np.array(v), np.array(right, float))[0]
           for t, v in conf.items()}
    # ties go to the temperature nearest the default one
    best = min(ece, key=lambda t: (ece[t], abs(t - GREEDY_NEURAL_ARC_TEMPERATURE)))
    c.config = replace(c.config, confidence_temperature=best)
    return best, ece


def _feats_right(c, dev, forms, tags, own_feats) -> dict[float, int]:
    """Words whose FEATS are right for each `feats_min_prob` of FEATS_MIN_PROBS: the
    analyser's (`own_feats`: FEATS and probabilities) where it gives them that
    probability, else the front-end guesser's over the same tags (0 alone without a
    guesser)."""
    right = dict.fromkeys(FEATS_MIN_PROBS if c.feats is not None else (0.0,), 0)
    for s, f, (up, xp, _), (own, prob) in zip(dev, forms, tags, own_feats, strict=True):
        gold = [w.feats for w in s.words]
        guess = c.feats.predict(f, up, xp) if c.feats is not None else own
        for t in right:
            right[t] += sum(p == g for p, g in zip(mix_feats(own, prob, guess, t), gold))
    return right
