"""MCMC decoding: sample trees from p(y) ~ exp(s(y)/T) and anneal T.

Zhang, Lei, Barzilay, Jaakkola & Globerson, "Steps to Excellence" (ACL 2014),
Figure 1: draw a tree from a proposal (Gibbs or random-walk MH, in
sampling_moves.py), lower T <- c*T, keep the best tree seen, stop at
convergence, at a budget of samples or at the deadline. A *sweep* is n-1
Gibbs proposals or ceil(n/K) random-walk proposals; the budget counts sweeps
per chain.

Our choices, beyond the paper: the chain starts from the exact first-order
tree (Chu-Liu-Edmonds under the proposal scores Q); T falls once per sweep and
never under MIN_T; convergence is `converge` sweeps in a row that leave the
score unchanged (the chain has frozen); `chains` independent annealing runs
(restarts, as in the greedy decoder) keep the best of their trees: on en_ewt,
two chains cooling at 0.9 reach higher scores than one chain cooling at 0.95
in the same time (bench/journal/04-sampling.md, "Score vs speed"). Random-walk proposals are
never sharper than exp(Q/PROPOSAL_MIN_T), so they keep proposing new heads at low T.

With confidence sweeps asked for, a second chain starts from the best tree at
a fixed temperature and counts, per word, the samples that agree with it
(see confidence.py). Python owns the deadline and calls `sampling_chunk` for a
few sweeps at a time (UMAP's Python-outer / numba-inner split).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from .features import MAX_FEATURES
from .global_features import global_scratch
from .sampling_moves import gibbs_step, global_refresh, init_scores, walk_step
from .scoring import Scoring

GIBBS = 0
RANDOM_WALK = 1
PROPOSALS = {"gibbs": GIBBS, "random_walk": RANDOM_WALK}
RW_K = 4                 # heads redrawn by one random-walk proposal (paper: 4)
MIN_T = 1e-3             # the annealing schedule stops here
PROPOSAL_MIN_T = 0.25    # random-walk proposals are never sharper than exp(Q/0.25)
_EPS = 1e-9

# stats slots of sampling_chunk
_SCORE, _BEST, _SWEEPS, _BEST_SWEEP, _SINCE, _PROPOSED, _CHANGED, _WALK_FAIL, _KEPT = range(9)
N_STATS = 9


@njit(cache=True)
def sampling_chunk(chain, space, sc, Q, state, limits, schedule, outputs, gl):
    """Run up to `chunk` sweeps of the chain (heads, F, B) recorded in `stats`;
    space = (cand, ncand, root_ok); sc: the sentence's `Scoring`; limits (int64):
    [max_sweeps, converge, chunk, proposal, K, anneal, burn_in]; schedule (float64):
    [t0, cooling, tp_min]; outputs = (stats (float64 (N_STATS)), best_heads, agree,
    trace); gl: the global features' scratch and the current tree's terms
    (`global_features.global_scratch`).

    anneal: T = max(t0 * cooling**sweep, MIN_T); random-walk proposals use
    Tp = max(T, tp_min); the best tree goes to best_heads; stop after max_sweeps
    sweeps or after `converge` sweeps in a row that end with the score they began with.
    Otherwise (confidence phase): T = t0; each sweep after the first `burn_in`
    adds 1 to agree[m] (float64 (n+1)) where heads[m] == best_heads[m]; stop
    after max_sweeps. The tree after sweep i goes to trace[i] (int64 (cap, n+1))
    while i < cap. Returns True when the chain is finished.
    """
    heads, F, B = chain
    stats, best_heads, agree, trace = outputs
    max_sweeps, converge, chunk, proposal, K = limits[0], limits[1], limits[2], limits[3], limits[4]
    anneal, burn_in = limits[5] == 1, limits[6]
    t0, cooling, tp_min = schedule[0], schedule[1], schedule[2]
    n1 = heads.shape[0]
    width = space[0].shape[1]
    delta = np.empty(2 * width + 2)
    opt = np.empty(2 * width + 2, dtype=np.int64)
    hs = np.empty(3 * K + 6, dtype=np.int64)
    ms = np.empty(3 * K + 6, dtype=np.int64)
    parts = np.empty((1, 5), dtype=np.int64)
    buf = np.empty(MAX_FEATURES, dtype=np.uint64)
    perm = np.empty(n1, dtype=np.int64)
    nxt = np.empty(n1, dtype=np.int64)
    in_z = np.empty(n1, dtype=np.bool_)
    in_tree = np.empty(n1, dtype=np.bool_)
    cdf = np.empty((n1, width + 1))
    zs = np.empty(K, dtype=np.int64)
    old = np.empty(K, dtype=np.int64)
    scratch = (hs, ms, parts, buf)
    walk = (perm, in_z, in_tree, nxt, cdf, zs, old)
    g_steps = n1 - 2 if proposal == GIBBS else 0
    w_steps = 0 if proposal == GIBBS else (n1 - 1 + K - 1) // K
    for _ in range(chunk):
        if stats[_SWEEPS] >= max_sweeps or (anneal and stats[_SINCE] >= converge):
            return True
        T = max(t0 * cooling ** stats[_SWEEPS], MIN_T) if anneal else t0
        Tp = max(T, tp_min)
        improved = False
        before = stats[_SCORE]
        for s in range(g_steps + w_steps):
            if s < g_steps:
                d, changed = gibbs_step(chain, space, sc, T, state, delta, opt, scratch, gl)
            else:
                d, changed, failed = walk_step(chain, space, sc, Q, T, Tp, K, state, walk,
                                               scratch, gl)
                stats[_WALK_FAIL] += failed
            stats[_PROPOSED] += 1
            if changed:
                stats[_CHANGED] += 1
                stats[_SCORE] += d
                if anneal and stats[_SCORE] > stats[_BEST] + _EPS:
                    stats[_BEST] = stats[_SCORE]
                    best_heads[:] = heads
                    improved = True
        stats[_SWEEPS] += 1
        if anneal:
            if improved:
                stats[_BEST_SWEEP] = stats[_SWEEPS]
            if abs(stats[_SCORE] - before) > _EPS:
                stats[_SINCE] = 0
            else:
                stats[_SINCE] += 1
        elif stats[_SWEEPS] > burn_in:
            for m in range(1, n1):
                agree[m] += heads[m] == best_heads[m]
            stats[_KEPT] += 1
        i = np.int64(stats[_SWEEPS]) - 1
        if i < trace.shape[0]:
            trace[i, :] = heads
    return stats[_SWEEPS] >= max_sweeps or (anneal and stats[_SINCE] >= converge)


@dataclass
class SamplingResult:
    heads: np.ndarray            # int64 (n+1), heads[0] = -1: the best tree seen
    score: float                 # its score, as tracked by the chain
    sweeps: int                  # annealing sweeps run, all chains
    chains: int                  # chains run
    best_chain: int              # 1-based chain that found the best tree
    best_sweep: int              # its sweep that first reached it (0 = the start)
    proposals: int
    changed: int                 # proposals that changed the tree
    walk_failures: int           # random walks given up (counted as rejections)
    deadline_hit: bool
    agree: np.ndarray | None     # float64 (n+1): confidence-phase samples agreeing with heads
    kept: int                    # confidence-phase samples after burn-in


class _Chain:
    """One chain's arrays and the Python loop around `sampling_chunk`."""

    def __init__(self, heads, tables, Q, seed_state, proposal, k, tp_min, glob=False):
        self.heads = np.array(heads, dtype=np.int64)
        self.heads[0] = -1
        self.space = tables[:3]
        self.sc = Scoring(int(tables[3]), *tables[4:])
        self.Q = Q
        self.state = seed_state
        self.proposal = proposal
        self.k = k
        self.tp_min = tp_min
        n1 = self.heads.shape[0]
        self.F = np.zeros(n1 + 2)
        self.B = np.zeros(n1 + 3)
        self.stats = np.zeros(N_STATS)
        self.gl = global_scratch(n1, glob)
        self.stats[_SCORE] = self.stats[_BEST] = init_scores(self.heads, self.F, self.B,
                                                             self.sc) + global_refresh(
            self.heads, tables[5], tables[7], tables[8], self.gl)

    def run(self, *, t0, cooling, max_sweeps, converge, anneal, best, burn_in, agree, trace,
            deadline, chunk) -> bool:
        """Sweep until finished (False) or past the deadline (True)."""
        while True:
            done = sampling_chunk(
                (self.heads, self.F, self.B), self.space, self.sc, self.Q, self.state,
                np.array([max_sweeps, converge, chunk, self.proposal, self.k, anneal, burn_in],
                         np.int64),
                np.array([t0, cooling, self.tp_min], np.float64), (self.stats, best, agree, trace),
                self.gl)
            if done:
                return False
            if deadline is not None and time.monotonic() >= deadline:
                return True


def sampling_search(cand, ncand, root_ok, order, S, attrs, up, w, mask, memo, *, start,
                    seed_state, proposal="gibbs", samples=50, temperature=1.0, cooling=0.9,
                    converge=10, chains=1, deadline=None, confidence_sweeps=0,
                    confidence_temperature=1.0, proposal_scores=None, k=RW_K,
                    proposal_min_t=PROPOSAL_MIN_T, chunk=4, trace=None,
                    global_features=False) -> SamplingResult:
    """Anneal `chains` independent chains from `start` (int64 (n+1)), one after
    the other on one random stream, and keep the best tree; then, if
    confidence_sweeps > 0, sample that many sweeps at confidence_temperature from
    the best tree (the first fifth is burn-in) and count agreements with it.
    Random walks draw from `proposal_scores` (float64 (n+1, n+1); default S).
    `trace` (int64 (cap, n+1)), if given, receives the first chain's tree after
    each sweep."""
    Q = np.ascontiguousarray(S if proposal_scores is None else proposal_scores, dtype=np.float64)
    tables = (cand, ncand, root_ok, order, S, attrs, up, w, np.uint64(mask)) + tuple(memo)
    code = PROPOSALS[proposal]
    n1 = S.shape[0]
    no_trace = np.zeros((0, n1), dtype=np.int64)
    best, best_stats, best_chain = None, None, 0
    total = np.zeros(N_STATS)
    hit = False
    for c in range(chains):
        chain = _Chain(start, tables, Q, seed_state, code, k, proposal_min_t, global_features)
        heads = chain.heads.copy()
        hit = chain.run(t0=float(temperature), cooling=float(cooling), max_sweeps=samples,
                        converge=converge, anneal=True, best=heads, burn_in=0,
                        agree=np.zeros(n1), trace=no_trace if trace is None or c else trace,
                        deadline=deadline, chunk=chunk)
        total += chain.stats
        if best is None or chain.stats[_BEST] > best_stats[_BEST] + _EPS:
            best, best_stats, best_chain = heads, chain.stats, c + 1
        if hit:
            break
    agree, kept = None, 0
    if confidence_sweeps > 0 and not hit:
        conf = _Chain(best, tables, Q, seed_state, code, k, proposal_min_t, global_features)
        agree = np.zeros(n1)
        hit = conf.run(t0=float(confidence_temperature), cooling=1.0,
                       max_sweeps=confidence_sweeps, converge=0, anneal=False, best=best,
                       burn_in=confidence_sweeps // 5, agree=agree, trace=no_trace,
                       deadline=deadline, chunk=chunk)
        kept = int(conf.stats[_KEPT])
    return SamplingResult(
        heads=best, score=float(best_stats[_BEST]), sweeps=int(total[_SWEEPS]),
        chains=c + 1, best_chain=best_chain, best_sweep=int(best_stats[_BEST_SWEEP]),
        proposals=int(total[_PROPOSED]), changed=int(total[_CHANGED]),
        walk_failures=int(total[_WALK_FAIL]), deadline_hit=hit, agree=agree, kept=kept)
