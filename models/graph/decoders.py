"""Decoders over a scored sentence, registered by name.

Each decoder takes the arc space of a sentence (allowed arcs, arc scores S)
and the model's higher-order scorer, plus a validated budget, and returns a
`Decoded`. The service lists `DECODERS`; a new decoder registers here.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import DeptreeError
from .confidence import (
    CONFIDENCE_SWEEPS,
    CONFIDENCE_TEMPERATURE,
    optima_confidence,
    sample_confidence,
)
from .decode_mst import decode_mst
from .rng import new_state
from .scoring import new_memo, tree_score
from .search_space import build_search_space


@dataclass
class Decoded:
    heads: np.ndarray
    score: float
    stats: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Scorer:
    """Everything a decoder needs to score trees of one sentence."""

    order: int
    S: np.ndarray          # float64 (n+1, n+1) arc scores, -inf for pruned arcs
    allowed: np.ndarray    # bool (n+1, n+1)
    attrs: np.ndarray
    upos_prefix: np.ndarray
    weights: np.ndarray
    mask: int
    first_order: np.ndarray | None = None  # scores of the model's own first-order model
                                           # (its pruner), all arcs; None: use S

    def score(self, heads: np.ndarray) -> float:
        mk, mv, mf = new_memo(self.S.shape[0] - 1)
        return float(tree_score(heads, self.order, self.S, self.attrs, self.upos_prefix,
                                self.weights, np.uint64(self.mask), mk, mv, mf))


class BudgetError(DeptreeError):
    """A decoder budget value outside its range."""


def _int(budget: dict, name: str, default: int, lo: int, hi: int) -> int:
    v = budget.get(name, default)
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not lo <= v <= hi:
        raise BudgetError(f"{name} must be an integer in [{lo}, {hi}], got {v!r}")
    return int(v)


def deadline_of(budget: dict) -> float | None:
    """time.monotonic() at which `deadline_ms` of the budget runs out (None: no deadline)."""
    ms = budget.get("deadline_ms")
    if ms is None:
        return None
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or ms <= 0:
        raise BudgetError(f"deadline_ms must be a positive number, got {ms!r}")
    return time.monotonic() + ms / 1000.0


def remaining_budget(deadline: float | None) -> dict:
    """The budget of a stage that must end by `deadline` (time.monotonic(); None: no
    deadline): {"deadline_ms": what is left of it, at least a microsecond, so a late
    stage takes its least step}. How one deadline covers tagging, a partner decoder and
    the main decoder of one sentence."""
    if deadline is None:
        return {}
    return {"deadline_ms": max(1e-3, (deadline - time.monotonic()) * 1000.0)}


def _choice(budget: dict, name: str, default: str, choices: tuple[str, ...]) -> str:
    """One of `choices` (a decoder option such as `init` or `proposal`)."""
    v = budget.get(name, default)
    if v not in choices:
        raise BudgetError(f"{name} must be one of {', '.join(choices)}, got {v!r}")
    return v


def _float(budget: dict, name: str, default: float, lo: float, hi: float) -> float:
    """A number in (lo, hi]."""
    v = budget.get(name, default)
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
            or not lo < v <= hi:
        raise BudgetError(f"{name} must be a number in ({lo:g}, {hi:g}], got {v!r}")
    return float(v)


def _confidence(budget: dict) -> bool:
    v = budget.get("confidence", False)
    if not isinstance(v, bool):
        raise BudgetError(f"confidence must be true or false, got {v!r}")
    return v


# converge 20: on en_ewt dev it finds the best tree of a 3000-restart run for >= 98% of
# sentences (converge 10: 96%) at over 5,000 tokens/s (bench/RESULTS.md)
GREEDY_DEFAULTS = {"restarts": 100, "converge": 20, "init": "first_order", "seed": 0}
INITS = ("uniform", "first_order", "mst")
GREEDY_LIMITS = {"restarts": (1, 10000), "converge": (1, 10000), "seed": (0, 2**63 - 1)}


def decode_greedy(sc: Scorer, budget: dict) -> Decoded:
    """Randomized greedy hill-climbing (Zhang et al. 2014, Figure 1).

    init: "uniform" or "first_order" draw every restart's tree from Wilson's
    walk (uniform or first-order weighted, as in the paper); "mst" (our
    extension) climbs first from the exact first-order tree, then from
    first-order weighted random trees.
    """
    from .decode_greedy import greedy_search  # see _lazy_decoders below

    restarts = _int(budget, "restarts", GREEDY_DEFAULTS["restarts"], *GREEDY_LIMITS["restarts"])
    converge = _int(budget, "converge", GREEDY_DEFAULTS["converge"], *GREEDY_LIMITS["converge"])
    seed = _int(budget, "seed", GREEDY_DEFAULTS["seed"], *GREEDY_LIMITS["seed"])
    init = _choice(budget, "init", GREEDY_DEFAULTS["init"], INITS)
    confidence = _confidence(budget)
    deadline = deadline_of(budget)
    t0 = time.perf_counter()
    space = build_search_space(sc.allowed, sc.S, "uniform" if init == "uniform" else "first_order")
    start = decode_mst(sc.S) if init == "mst" else None
    res = greedy_search(space.cand, space.ncand, space.cdf, space.root_cdf, space.root_ok,
                        sc.order, sc.S, sc.attrs, sc.upos_prefix, sc.weights, sc.mask,
                        new_memo(sc.S.shape[0] - 1), seed_state=new_state(seed),
                        restarts=restarts, converge=converge, deadline=deadline, start=start)
    stats = {
        "restarts_used": res.restarts, "best_restart": res.best_restart,
        "distinct_optima": res.distinct_optima, "deadline_hit": res.deadline_hit,
        "seconds": time.perf_counter() - t0,
    }
    if confidence:  # see models/graph/confidence.py
        stats["confidence"] = optima_confidence(res.optima, res.optima_scores, res.heads)
        stats["confidence_samples"] = len(res.optima_scores)
    out = Decoded(res.heads, res.score, stats)
    out.optima = (res.optima, res.optima_scores, res.optima_counts)  # type: ignore[attr-defined]
    return out


def decode_mst_exact(sc: Scorer, budget: dict) -> Decoded:
    """Exact first-order MST (Chu-Liu-Edmonds) under the model's first-order model
    (for a higher-order model: the first-order model it prunes with) over the same
    pruned arcs the other decoders search, so the tree's score under the full
    model (reported) is always finite."""
    deadline_of(budget)
    t0 = time.perf_counter()
    if sc.first_order is not None:
        heads = decode_mst(np.where(sc.allowed, sc.first_order, -np.inf))
    else:
        heads = decode_mst(sc.S)
    score = sc.score(heads) if sc.order > 1 else float(sum(sc.S[heads[1:], np.arange(1, len(heads))]))
    return Decoded(heads, score, {"seconds": time.perf_counter() - t0, "deadline_hit": False})


SAMPLING_DEFAULTS = {"proposal": "gibbs", "samples": 50, "temperature": 1.0, "cooling": 0.9,
                     "converge": 10, "chains": 2, "seed": 0}
SAMPLING_LIMITS = {"samples": (1, 100000), "converge": (1, 100000), "chains": (1, 100),
                   "seed": (0, 2**63 - 1)}


def decode_sampling(sc: Scorer, budget: dict) -> Decoded:
    """MCMC sampling with simulated annealing (Zhang et al. 2014, ACL, Figure 1),
    Gibbs or random-walk MH proposals; see decode_sampling.py. `samples` counts
    sweeps (n-1 Gibbs or n/4 random-walk proposals) per chain, T falls by
    `cooling` per sweep from `temperature`, a chain stops after `converge` sweeps
    that leave its score unchanged, and the best tree of `chains` chains wins.
    The first-order model (sc.first_order, else S) gives the start tree (its
    MST over the allowed arcs) and the random walk's weights."""
    from .decode_sampling import PROPOSALS, sampling_search  # see _lazy_decoders below

    d, lim = SAMPLING_DEFAULTS, SAMPLING_LIMITS
    samples = _int(budget, "samples", d["samples"], *lim["samples"])
    converge = _int(budget, "converge", d["converge"], *lim["converge"])
    chains = _int(budget, "chains", d["chains"], *lim["chains"])
    seed = _int(budget, "seed", d["seed"], *lim["seed"])
    temperature = _float(budget, "temperature", d["temperature"], 0.0, 1e6)
    cooling = _float(budget, "cooling", d["cooling"], 0.0, 1.0)
    proposal = _choice(budget, "proposal", d["proposal"], PROPOSALS)
    confidence = _confidence(budget)
    deadline = deadline_of(budget)
    t0 = time.perf_counter()
    space = build_search_space(sc.allowed, sc.S, "uniform")
    # first-order model (the pruner's, else S) on the allowed arcs: start tree and walk weights
    Q = np.where(sc.allowed, sc.S if sc.first_order is None else sc.first_order, -np.inf)
    res = sampling_search(space.cand, space.ncand, space.root_ok, sc.order, sc.S, sc.attrs,
                          sc.upos_prefix, sc.weights, sc.mask, new_memo(sc.S.shape[0] - 1),
                          start=decode_mst(Q), proposal_scores=Q,
                          seed_state=new_state(seed), proposal=proposal,
                          samples=samples, temperature=temperature, cooling=cooling,
                          converge=converge, chains=chains, deadline=deadline,
                          confidence_sweeps=CONFIDENCE_SWEEPS if confidence else 0,
                          confidence_temperature=CONFIDENCE_TEMPERATURE)
    stats = {
        "samples_used": res.sweeps, "chains_used": res.chains, "best_chain": res.best_chain,
        "best_sample": res.best_sweep, "proposals": res.proposals,
        "acceptance_rate": res.changed / max(1, res.proposals),
        "deadline_hit": res.deadline_hit, "seconds": time.perf_counter() - t0,
    }
    if confidence:  # see models/graph/confidence.py
        stats["confidence"] = sample_confidence(res.agree, res.kept)
        stats["confidence_samples"] = res.kept
    return Decoded(res.heads, sc.score(res.heads), stats)


# beam, swaps, alpha, beta tuned on an en_ewt dev subset (bench/RESULTS.md, bgi section)
# start: where the swaps start; not in the paper, the first-order MST as a second start:
# "both" (default; the MST joins the beam) gives en_ewt dev 88.63 UAS against the
# paper's "bgi" 87.54, at 0.83x its speed; "max" (one search, from the best of the
# beam's trees and the MST) 88.16 at 0.95x (bench/RESULTS.md). Also with ensemble_with:
# with selectional, 89.34 against 89.22 from "bgi" (the cluster model of 2026-11-26).
BGI_STARTS = ("bgi", "max", "both")
BGI_DEFAULTS = {"beam": 1, "swaps": 20, "alpha": 2.0, "beta": 0.3, "ensemble_with": None,
                "start": "both"}
# "selectional" is the transition parser of the Pipeline: it decodes first and hands
# its tree over as `ensemble_heads` (the graph model alone cannot run it)
BGI_ENSEMBLE = ("greedy", "mst", "selectional")


def _given_heads(heads, n: int) -> np.ndarray:
    """Another parser's tree (heads of words 1..n) as a heads array with the root slot."""
    if heads is None:
        raise BudgetError("ensemble_with 'selectional' needs a model with a transition parser")
    arr = np.asarray(heads, dtype=np.int64)
    if arr.shape != (n,) or arr.min(initial=0) < 0 or arr.max(initial=0) > n:
        raise BudgetError(f"ensemble heads must be {n} integers in 0..{n}")
    return np.concatenate([[-1], arr])


def decode_bgi(sc: Scorer, budget: dict) -> Decoded:
    """Greedy graph inference with partial-part predictions (Tchernowitz et al.
    2016): Algorithm 2, a beam, `swaps` rounds of arc swaps and, with
    `ensemble_with`, a bias toward that decoder's tree; see decode_bgi.py."""
    from .decode_bgi import run_bgi  # see _lazy_decoders below

    d = BGI_DEFAULTS
    beam = _int(budget, "beam", d["beam"], 1, 64)
    swaps = _int(budget, "swaps", d["swaps"], 0, 1000)
    alpha = _float(budget, "alpha", d["alpha"], 0.0, 100.0)
    beta = budget.get("beta", d["beta"])
    if isinstance(beta, bool) or not isinstance(beta, (int, float, np.integer, np.floating)) \
            or not 0.0 <= beta <= 1.0:
        raise BudgetError(f"beta must be a number in [0, 1], got {beta!r}")
    other = budget.get("ensemble_with", d["ensemble_with"])
    if other is not None:
        other = _choice(budget, "ensemble_with", other, BGI_ENSEMBLE)
    start = _choice(budget, "start", d["start"], BGI_STARTS)
    deadline = deadline_of(budget)
    t0 = time.perf_counter()
    if other == "selectional":
        bias = _given_heads(budget.get("ensemble_heads"), sc.S.shape[0] - 1)
    else:
        # the partner decodes within the same deadline (its default budget otherwise)
        bias = DECODERS[other](sc, remaining_budget(deadline)).heads \
            if other is not None else None
    heads, score, stats = run_bgi(sc, beam, swaps, alpha, float(beta), bias, deadline,
                                  start=start)
    stats["ensemble_with"] = other
    stats["seconds"] = time.perf_counter() - t0
    return Decoded(heads, score, stats)


# _lazy_decoders: the greedy, sampling and bgi modules are imported by their decoder
# function, on first use. Their kernels with explicit signatures compile when their
# module is imported (see features.py), so a process that never uses a decoder never
# compiles them, and a worker warming `mst` first is not held up by the others.
DECODERS: dict[str, Callable[[Scorer, dict], Decoded]] = {
    "greedy": decode_greedy,
    "mst": decode_mst_exact,
    "sampling": decode_sampling,
    "bgi": decode_bgi,
}

BUDGET_FIELDS: dict[str, tuple[str, ...]] = {
    "greedy": ("restarts", "converge", "init", "seed", "deadline_ms", "confidence"),
    "mst": ("deadline_ms",),
    "sampling": ("samples", "temperature", "cooling", "converge", "chains", "proposal", "seed",
                 "deadline_ms", "confidence"),
    "bgi": ("beam", "swaps", "alpha", "beta", "ensemble_with", "start", "deadline_ms"),
}

DECODER_DEFAULTS: dict[str, dict[str, Any]] = {
    "greedy": GREEDY_DEFAULTS,
    "mst": {},
    "sampling": SAMPLING_DEFAULTS,
    "bgi": BGI_DEFAULTS,
}
