"""Decoder `sampling`: MCMC with simulated annealing (Zhang et al. 2014, ACL), its
budget and the Python outer loop around the chains of `decode_sampling.py`."""
from __future__ import annotations

import time

import numpy as np

from ...decoders import DEADLINE, DecoderSpec, Field, deadline_of
from ..confidence import CONFIDENCE_SWEEPS, CONFIDENCE_TEMPERATURE, sample_confidence
from ..decode_mst import decode_mst
from ..rng import new_state
from ..scoring import new_memo
from ..search_space import build_search_space
from .base import CONFIDENCE, SEED, Decoded, Scorer

FIELDS = (
    Field("samples", "int", 50, "sweeps per chain", lo=1, hi=100000, cap=10000),
    Field("temperature", "number", 1.0, "initial temperature", lo=0, hi=1e6, lo_open=True),
    Field("cooling", "number", 0.9, "T <- cooling x T after every sweep", lo=0, hi=1.0,
          lo_open=True),
    Field("converge", "int", 10, "a chain stops after this many sweeps leave its score "
          "unchanged", lo=1, hi=100000, cap=2000),
    Field("chains", "int", 2, "independent chains; the best tree of all wins", lo=1, hi=100),
    Field("proposal", "choice", "gibbs", "gibbs: all heads of a word by their scores; "
          "random_walk: Metropolis-Hastings over first-order weighted heads",
          choices=("gibbs", "random_walk")),
    SEED, DEADLINE, CONFIDENCE,
)


def decode(sc: Scorer, b: dict) -> Decoded:
    """MCMC sampling with simulated annealing (Zhang et al. 2014, ACL, Figure 1),
    Gibbs or random-walk MH proposals; see decode_sampling.py. `samples` counts
    sweeps (n-1 Gibbs or n/4 random-walk proposals) per chain, T falls by
    `cooling` per sweep from `temperature`, a chain stops after `converge` sweeps
    that leave its score unchanged, and the best tree of `chains` chains wins.
    The first-order model (sc.first_order, else S) gives the start tree (its
    MST over the allowed arcs) and the random walk's weights."""
    from ..decode_sampling import sampling_search  # compiles on import: see __init__

    t0 = time.perf_counter()
    space = build_search_space(sc.allowed, sc.S, "uniform")
    # first-order model (the pruner's, else S) on the allowed arcs: start tree and walk weights
    Q = np.where(sc.allowed, sc.S if sc.first_order is None else sc.first_order, -np.inf)
    res = sampling_search(space.cand, space.ncand, space.root_ok, sc.order, sc.S, sc.attrs,
                          sc.upos_prefix, sc.weights, sc.mask, new_memo(sc.S.shape[0] - 1),
                          start=decode_mst(Q), proposal_scores=Q,
                          seed_state=new_state(b["seed"]), proposal=b["proposal"],
                          samples=b["samples"], temperature=b["temperature"],
                          cooling=b["cooling"], converge=b["converge"], chains=b["chains"],
                          deadline=deadline_of(b),
                          confidence_sweeps=CONFIDENCE_SWEEPS if b["confidence"] else 0,
                          confidence_temperature=CONFIDENCE_TEMPERATURE,
                          global_features=sc.global_features)
    stats = {
        "samples_used": res.sweeps, "chains_used": res.chains, "best_chain": res.best_chain,
        "best_sample": res.best_sweep, "proposals": res.proposals,
        "acceptance_rate": res.changed / max(1, res.proposals),
        "deadline_hit": res.deadline_hit, "seconds": time.perf_counter() - t0,
    }
    if b["confidence"]:  # see models/graph/confidence.py
        stats["confidence"] = sample_confidence(res.agree, res.kept)
        stats["confidence_samples"] = res.kept
    return Decoded(res.heads, sc.score(res.heads), stats)


SPEC = DecoderSpec("sampling", "MCMC sampling with simulated annealing (Zhang et al. 2014)",
                   FIELDS, decode)
