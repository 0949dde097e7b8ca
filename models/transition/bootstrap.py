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
    pack_bits,
    sparse_weights,
)
from .examples import Examples, explore_room
from .features import N_POS, extract
from .model import TransitionModel
from .oracle import oracle_move
from .system import J, Moves, N, action_index, apply, new_state, valid_mask

logger = logging.getLogger(__name__)


@njit(cache=True)
def _explore(gh, gl, attrs, table, weights, moves, aindex, ex, start):
    """Follow the model (compact weights (row_of, Wc, sp), `classifier.compact`;
    moves: `system.Moves`) greedily on one sentence; write (features, oracle move,
    valid mask) of every state whose oracle move is valid into the `Examples` ex, from
    row start on. Returns the end index in ex.X."""
    row_of, Wc, sp = weights
    atype, alabel, root_label = moves
    X, y, V = ex.X, ex.y, ex.V
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
            pack_bits(vm, V[m])
            y[m] = a
            m += 1
        looked[:] = rows                  # compact_probabilities overwrites its rows
        best = compact_probabilities(row_of, Wc, sp, looked, vm, probs)
        if best < 0:
            break
        apply(st, sc, atype[best], alabel[best])
    return m


def explore_examples(model: TransitionModel, golds, attrs_list, aindex,
                     examples: Examples) -> Examples:
    """Instances from the model's own one-best sequences on the training set, written
    after the `examples.n` rows already filled (the gold instances): the union a round
    trains on, with no copy of the gold ones (`examples.py`). Each round overwrites
    the previous round's rows."""
    if examples.room() < explore_room(golds):
        raise ValueError(f"room for {examples.room()} explored instances, not "
                         f"{explore_room(golds)}: build the gold ones with room to explore")
    m = examples.n
    moves = Moves(model.atype, model.alabel, model.root_label)
    for (gh, gl), attrs in zip(golds, attrs_list):
        m = _explore(gh, gl, attrs, model.table, tuple(model.weights), moves, aindex, examples, m)
    return examples._replace(n=m)


def bootstrap(model: TransitionModel, golds, attrs_tr, gold: Examples, dev_eval, *, rounds: int,
              epochs: int, alpha: float, rho: float, eps: float, seed: int = 0,
              checkpoint=None, progress=None):
    """Algorithm 1: returns (best model, log of (round, dev UAS)). checkpoint (with
    `save(name, weights, meta)` and `load(name)`) keeps the state after each round, from
    which a rerun continues; progress(n) is told of every epoch."""
    aindex = action_index(model.atype, model.alabel, len(model.labels))
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
        union = explore_examples(best, golds, attrs_tr, aindex, gold)
        n_explored = union.n - gold.n
        W = np.zeros(shape, np.float32)
        G = np.zeros_like(W)
        p = np.zeros(W.shape[1])
        round_best, round_uas = None, -1.0
        for ep in range(1, epochs + 1):
            adagrad_epoch(W, G, union.X, union.y, union.V,
                          rng.permutation(union.n).astype(np.int64), alpha, rho, eps, p)
            cand = TransitionModel(model.labels, model.atype, model.alabel, model.templates, W,
                                   dict(model.meta))
            uas = dev_eval(cand)
            logger.info("bootstrap round %d epoch %d: %d + %d instances, dev UAS %.2f", r, ep,
                        gold.n, n_explored, uas)
            if progress is not None:
                progress(1)
            if uas > round_uas:       # a sparse snapshot, not a second dense table
                round_best = None
                round_best, round_uas = sparse_weights(W), uas
        del W, G, cand                   # before the next round allocates its own
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
