"""Calibration of a built model on its development set: how the pipeline mixes its parts.

Three settings of `pipeline.json`, each chosen by its figure on dev with the
model's own tags: `tag_weight`, the divisor of the analyser's tag log-probabilities
in the accurate tagger (best UPOS + XPOS accuracy); `arc_weight`, the weight of the
analyser's arc scores in the graph decoders when a request leaves `neural` unset
(best UAS + LAS of greedy at its default budget); and `neural_labels`, whether the
relations come from the analyser or the graph model's labeler (best LAS). A
treebank the graph model learns well gets a small arc weight; a small one, where
the linear model has seen little, a large one.
"""
from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import numpy as np

from models.components import load_components
from models.conllu import read_conllu
from models.neural.tagger import AnalyserTagger
from models.parse_policy import neural_relations, parse_tagged
from models.progress import progress_bar
from models.tagging import ACCURATE, Tagging

logger = logging.getLogger(__name__)

TAG_WEIGHTS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
ARC_WEIGHTS = (0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 4.0, 10.0)
CHUNK = 64                     # sentences analysed as one batch
MAX_WORDS = 10_000             # of dev parsed per setting (the first sentences)


def calibrate(model_dir: Path, dev_path: Path) -> dict:
    """The settings (and the figures they were chosen by) for model_dir's
    pipeline.json; without an analyser, an empty dict (the defaults)."""
    c = load_components(model_dir)
    if c.analyser is None or c.tagger is None:
        return {}
    dev, words = [], 0
    for s in read_conllu(dev_path):
        if s.words and words < MAX_WORDS:
            dev.append(s)
            words += len(s.words)
    forms = [[w.form for w in s.words] for s in dev]
    gold_tags = [[(w.upos, w.xpos) for w in s.words] for s in dev]
    classes = c.tagger.classes
    lin, neu = [], []
    for k in range(0, len(forms), CHUNK):
        for f, a in zip(forms[k:k + CHUNK], c.analyser.analyze_batch(forms[k:k + CHUNK])):
            lin.append(c.tagger.scores(f))
            neu.append(a.tag_logp)
    gold = np.array([classes.index(t) if t in classes else -1 for s in gold_tags for t in s])
    upos = np.array([u for u, _ in classes])
    xpos = np.array([x for _, x in classes])
    lin_all, neu_all = np.concatenate(lin), np.concatenate(neu)
    tag_table = {}
    for w in TAG_WEIGHTS:
        pred = (lin_all + neu_all / w).argmax(1)
        ok = gold >= 0
        tag_table[w] = (float(np.mean(upos[pred] == np.where(ok, upos[gold], ""))) * 100,
                        float(np.mean(xpos[pred] == np.where(ok, xpos[gold], ""))) * 100)
    tag_weight = max(TAG_WEIGHTS, key=lambda w: (sum(tag_table[w]), w))
    logger.info("calibration: tag weight %g (UPOS %.2f, XPOS %.2f)", tag_weight,
                *tag_table[tag_weight])
    c.config = replace(c.config, tag_weight=tag_weight)
    c.accurate = AnalyserTagger(c.tagger, c.analyser, tag_weight)
    tagging = Tagging(c)
    right = {(w, lab): np.zeros(2) for w in ARC_WEIGHTS for lab in (True, False)}
    words = 0
    bar = progress_bar(len(forms), "calibration", "sent")
    for k in range(0, len(dev), CHUNK):
        chunk = dev[k:k + CHUNK]
        c.analyser.analyze_batch(forms[k:k + CHUNK])
        for s, f in zip(chunk, forms[k:k + CHUNK]):
            up, xp, lem = tagging.tag_for(f, ACCURATE, "greedy")
            gh = [w.head for w in s.words]
            gr = [w.deprel for w in s.words]
            words += len(f)
            for w in ARC_WEIGHTS:
                heads = parse_tagged(c, f, up, xp, lem, "greedy", {"neural": w},
                                     analysed=True).heads
                ok_h = np.array(heads) == np.array(gh)
                neural_lab = neural_relations(c, c.analyser.analyze(f), heads)
                graph_lab = c.graph.label(c.graph.encode(f, lem, up, xp),
                                          np.array([-1] + list(heads)))
                for lab, rels in ((True, neural_lab), (False, graph_lab)):
                    right[(w, lab)] += (ok_h.sum(), (ok_h & (np.array(rels) == np.array(gr))
                                                     ).sum())
            bar.update(1)
    bar.close()
    table = {f"{w:g}/{'neural' if lab else 'graph'}": [round(100 * x / words, 2) for x in r]
             for (w, lab), r in right.items()}
    (w, lab), best = max(right.items(), key=lambda kv: (kv[1].sum(), -kv[0][0]))
    logger.info("calibration: arc weight %g, relations from the %s (UAS %.2f, LAS %.2f)", w,
                "analyser" if lab else "graph labeler", *(100 * best / words))
    return {"tag_weight": tag_weight, "arc_weight": w, "neural_labels": lab,
            "calibration": {"dev_words": words,
                            "tags": {f"{k:g}": [round(x, 2) for x in v]
                                     for k, v in tag_table.items()},
                            "greedy_uas_las": table}}
