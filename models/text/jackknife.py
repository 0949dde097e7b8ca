"""Jackknifed (k-fold) tags: every sentence tagged by a model that did not see it.

A parser trained on gold tags meets predicted ones at test time; trained on
jackknifed tags it sees test-like errors. The same function gives the level-1
predictions a stacked tagger is trained on (`Tagger.train(stack_folds=k)`).
Pure function over lists; the only files are the optional per-fold checkpoints.
"""
from __future__ import annotations

import functools
import json
import logging
import os
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from models.progress import progress_bar
from models.text.wordclasses import WordClasses

logger = logging.getLogger(__name__)


class _Tags(Protocol):
    def tag(self, forms: Sequence[str]) -> tuple[list[str], list[str]]: ...


def fold_ids(n: int, k: int, seed: int = 0) -> np.ndarray:
    """int64 [n]: fold of each sentence, a seeded shuffle dealt round robin."""
    if not 1 < k:
        raise ValueError(f"k={k}: need at least 2 folds")
    folds = np.empty(n, np.int64)
    folds[np.random.default_rng(seed).permutation(n)] = np.arange(n) % k
    return folds


def _default_train(sentences: list[Sequence[Sequence[str]]]) -> _Tags:
    """A tagger as `train_frontend` ships it: bidirectional, with word classes
    when spacy-lookups-data is installed (else without, and a warning)."""
    from models.text.tagger import Tagger

    return Tagger.train(sentences, bidirectional=True, word_classes=_word_classes())


@functools.lru_cache(maxsize=1)
def _word_classes() -> WordClasses | None:
    try:
        return WordClasses.from_spacy_lookups()
    except ModuleNotFoundError as e:
        logger.warning("jackknifing with a tagger without word classes: %s", e)
        return None


def jackknife_tags(sentences: Sequence[Sequence[Sequence[Any]]], k: int = 10, seed: int = 0,
                   train_fn: Callable[[list], _Tags] | None = None,
                   checkpoints: str | None = None) -> list[tuple[list[str], list[str]]]:
    """Predicted (upos, xpos) per sentence, each from the model of the other k-1 folds.

    sentences: lists of (form, upos, xpos, ...) tuples; train_fn(train_sentences)
    returns anything with `.tag(forms) -> (upos, xpos)` (default: `Tagger.train`
    with the settings of `train_frontend`: bidirectional, 12 epochs, seed 0).
    With fewer sentences than folds, k is reduced to the number of sentences.
    checkpoints: a directory where each fold's tags are kept, so that a rerun reads
    the folds an interrupted run finished.
    """
    train_fn = train_fn or _default_train
    n = len(sentences)
    if n < 2:
        raise ValueError(f"{n} sentences: jackknifing needs at least 2")
    out: list[tuple[list[str], list[str]] | None] = [None] * n
    k = min(k, n)
    folds = fold_ids(n, k, seed)
    bar = progress_bar(k, "jackknifed tags", "fold")
    for f in range(k):
        members = np.flatnonzero(folds == f)
        saved = os.path.join(checkpoints, f"fold-{f}-of-{k}.json") if checkpoints else None
        if saved and os.path.exists(saved):
            with open(saved, encoding="utf-8") as fh:
                tags = json.load(fh)
        else:
            model = train_fn([sentences[i] for i in range(n) if folds[i] != f])
            tags = [list(map(list, model.tag([w[0] for w in sentences[i]]))) for i in members]
            if saved:
                os.makedirs(checkpoints, exist_ok=True)
                with open(saved + ".tmp", "w", encoding="utf-8") as fh:
                    json.dump(tags, fh)
                os.replace(saved + ".tmp", saved)
        for i, t in zip(members, tags):
            out[i] = (list(t[0]), list(t[1]))
        bar.update(1)
        logger.debug("jackknife fold %d/%d: tagged %d", f + 1, k, len(members))
    bar.close()
    return out  # type: ignore[return-value]


def retag_jackknifed(sentences: Sequence[Any], k: int = 10, seed: int = 0,
                     train_fn: Callable[[list], _Tags] | None = None,
                     checkpoints: str | None = None) -> float:
    """Replace the UPOS and XPOS of CoNLL-U sentences (`models.conllu.Sentence`) in place
    by their k-fold jackknifed predictions (`jackknife_tags`); return the percentage of
    words whose predicted UPOS is the gold one."""
    tags = jackknife_tags([[(w.form, w.upos, w.xpos) for w in s.words] for s in sentences],
                          k=k, seed=seed, train_fn=train_fn, checkpoints=checkpoints)
    right = total = 0
    for sent, (upos, xpos) in zip(sentences, tags):
        for w, u, x in zip(sent.words, upos, xpos):
            right += w.upos == u
            total += 1
            w.upos, w.xpos = u, x
    return 100.0 * right / max(1, total)
