"""Bootstrapping (Choi & McCallum 2013, Algorithm 1, Section 3.5), with b_t = 1.

Round r parses every training sentence with the model of round r-1 and adds the
states of its one-best sequence T1 to the gold-sequence instances; the model is
retrained from scratch on the union and kept while dev UAS improves. A state of T1
is labelled with the static oracle's move when that move is still valid there (the
oracle of `oracle.py` answers in any state, but off the gold path its move may be
blocked, e.g. LEFT for a word that already has a wrong head); such states are left
out. This is the exploration the paper's footnote allows in place of its own
labelling; with b_t = 1 there is no T_best to add beside T1.
"""
from __future__ import annotations

import logging
import time

import numpy as np
from numba import njit

from .classifier import (
    adagrad_epoch,
    compact,
    compact_probabilities,
    flat_weights,
    sparse_weights,
)
from .features import N_POS, extract
from .model import TransitionModel
from .oracle import oracle_move
from .system import J, N, apply, new_state, valid_mask

logger = logging.getLogger(__name__)


@njit(cache=True)
def _explore(gh, gl, attrs, table, row_of, Wc, sp, atype, alabel, aindex, root_label, X, y, V,
             start):
    """Follow the model (compact weights, `classifier.compact`) greedily on one sentence;
    write (features, oracle move, valid mask) of every state whose oracle move is valid.
    Returns the end index in X."""
    n = gh.shape[0] - 1
    st, sc = new_state(n)
    pos = np.zeros(N_POS, np.int64)
    rows = np.zeros(table.shape[0], np.int64)
    looked = np.zeros(table.shape[0], np.int64)
    probs = np.zeros(atype.shape[0], np.float64)
    vm = np.zeros(atype.shape[0], np.bool_)
    m = start
    while sc[J] <= sc[N] and m < X.shape[0]:
        extract(st, sc, attrs, table, row_of.shape[0], pos, rows)
        valid_mask(st, sc, atype, alabel, root_label, vm)
        t, lab = oracle_move(st, sc, gh, gl)
        a = aindex[t, lab + 1]
        if a >= 0 and vm[a]:
            X[m, :] = rows
            V[m, :] = vm
            y[m] = a
            m += 1
        looked[:] = rows                  # compact_probabilities overwrites its rows
        best = compact_probabilities(row_of, Wc, sp, looked, vm, probs)
        if best < 0:
            break
        apply(st, sc, atype[best], alabel[best])
    return m


def explore_examples(model: TransitionModel, golds, attrs_list, aindex, before=None):
    """Instances from the model's own one-best sequences on the training set, after a
    copy of `before` (X, y, V) in the same arrays when it is given: the union a round
    trains on, built without a second copy of it (a training run on 50,176 sentences
    peaked at 3.62 GB instead of 4.03). The arrays are sized for 4 moves a word; only
    the rows written take memory."""
    start = 0 if before is None else len(before[1])
    cap = start + sum(4 * len(gh) for gh, _ in golds) + 16
    T = model.table.shape[0]
    X = np.zeros((cap, T), np.int32)
    y = np.zeros(cap, np.int64)
    V = np.zeros((cap, len(model.atype)), np.bool_)
    if before is not None:
        X[:start], y[:start], V[:start] = before
    m = start
    for (gh, gl), attrs in zip(golds, attrs_list):
        m = _explore(gh, gl, attrs, model.table, *model.weights, model.atype, model.alabel, aindex,
                     model.root_label, X, y, V, m)
    return X[:m], y[:m], V[:m]


def bootstrap(model: TransitionModel, golds, attrs_tr, gold_examples, dev_eval, *, rounds: int,
              epochs: int, alpha: float, rho: float, eps: float, seed: int = 0,
              checkpoint=None, progress=None):
    """Algorithm 1: returns (best model, log of (round, dev UAS)). checkpoint (with
    `save(name, weights, meta)` and `load(name)`) keeps the state after each round, from
    which a rerun continues; progress(n) is told of every epoch."""
    aindex = np.full((7, len(model.labels) + 1), -1, dtype=np.int64)
    for a, (t, la) in enumerate(zip(model.atype, model.alabel)):
        aindex[t, la + 1] = a
    Xg, yg, Vg = gold_examples
    shape = (model.n_rows, len(model.atype))

    def as_model(weights):
        return TransitionModel(model.labels, model.atype, model.alabel, model.templates, None,
                               dict(model.meta), compact(*weights, *shape))

    saved = checkpoint.load("bootstrap") if checkpoint is not None else None
    if saved is not None:
        best_weights, state = saved
        best = as_model(best_weights)
        history = [tuple(h) for h in state["history"]]
        best_uas = max(u for _, u in history)
        if progress is not None:
            progress(epochs * (len(history) - 1))
        if state["stopped"]:
            return best, history
    else:
        best, best_uas = model, dev_eval(model)
        best_weights = None          # the caller keeps the start's, in its own checkpoint
        history = [(0, best_uas)]
    for r in range(len(history), rounds + 1):
        rng = np.random.default_rng([seed, r])
        t0 = time.perf_counter()
        X, y, V = explore_examples(best, golds, attrs_tr, aindex, (Xg, yg, Vg))
        n_explored = len(y) - len(yg)
        W = np.zeros(shape, np.float32)
        G = np.zeros_like(W)
        p = np.zeros(W.shape[1])
        round_best, round_uas = None, -1.0
        for ep in range(1, epochs + 1):
            adagrad_epoch(W, G, X, y, V, rng.permutation(len(y)).astype(np.int64), alpha, rho,
                          eps, p)
            cand = TransitionModel(model.labels, model.atype, model.alabel, model.templates, W,
                                   dict(model.meta))
            uas = dev_eval(cand)
            logger.info("bootstrap round %d epoch %d: %d + %d instances, dev UAS %.2f", r, ep,
                        len(yg), n_explored, uas)
            if progress is not None:
                progress(1)
            if uas > round_uas:       # a sparse snapshot, not a second dense table
                round_best = None
                round_best, round_uas = sparse_weights(W), uas
        del W, G, cand, X, y, V          # before the next round allocates its own
        history.append((r, round_uas))
        logger.info("bootstrap round %d: dev UAS %.2f (best so far %.2f, %.0fs)", r, round_uas,
                    best_uas, time.perf_counter() - t0)
        stopped = round_uas <= best_uas
        if not stopped:
            best_uas, best_weights = round_uas, round_best
            best = None
            best = as_model(best_weights)
        del round_best
        if checkpoint is not None:
            if best_weights is None:
                flat, vals = flat_weights(*best.weights)
                best_weights = (np.diff(flat, prepend=0).astype(np.uint32),
                                vals.astype(np.float16))
            checkpoint.save("bootstrap", best_weights, {"history": history, "stopped": stopped})
        if stopped:
            break
    return best, history
