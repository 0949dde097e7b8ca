"""Decoder `greedy`: randomized greedy hill-climbing (Zhang et al. 2014), its budget
and the Python outer loop around the kernels of `decode_greedy.py`."""
from __future__ import annotations

import time

from ...decoders import DEADLINE, DecoderSpec, Field, deadline_of
from ..confidence import greedy_confidence
from ..decode_mst import decode_mst
from ..rng import new_state
from ..scoring import new_memo
from ..search_space import build_search_space
from .base import CONFIDENCE, SEED, Decoded, Scorer

# converge 20: on en_ewt dev it finds the best tree of a 3000-restart run for >= 98% of
# sentences (converge 10: 96%) at over 5,000 tokens/s (bench/journal/01-graph-parser.md,
# "Search quality" and "Speed and the accuracy/speed curve")
FIELDS = (
    Field("restarts", "int", 100, "most hill-climbs, each from a random tree", lo=1, hi=10000,
          cap=2000),
    Field("converge", "int", 20, "stop after this many climbs in a row find no better tree",
          lo=1, hi=10000, cap=2000),
    Field("init", "choice", "first_order", "start trees: uniform or first-order weighted "
          "random trees; mst: the exact first-order tree first", choices=("uniform",
                                                                       "first_order", "mst")),
    SEED, DEADLINE, CONFIDENCE,
)


def decode(sc: Scorer, b: dict) -> Decoded:
    """Randomized greedy hill-climbing (Zhang et al. 2014, Figure 1).

    init: "uniform" or "first_order" draw every restart's tree from Wilson's
    walk (uniform or first-order weighted, as in the paper); "mst" (our
    extension) climbs first from the exact first-order tree, then from
    first-order weighted random trees.
    """
    from ..decode_greedy import greedy_search  # compiles on import: see __init__

    init = b["init"]
    t0 = time.perf_counter()
    space = build_search_space(sc.allowed, sc.S, "uniform" if init == "uniform" else "first_order")
    start = decode_mst(sc.S) if init == "mst" else None
    res = greedy_search(space.cand, space.ncand, space.cdf, space.root_cdf, space.root_ok,
                        sc.order, sc.S, sc.attrs, sc.upos_prefix, sc.weights, sc.mask,
                        new_memo(sc.S.shape[0] - 1), seed_state=new_state(b["seed"]),
                        restarts=b["restarts"], converge=b["converge"],
                        deadline=deadline_of(b), start=start,
                        global_features=sc.global_features)
    stats = {
        "restarts_used": res.restarts, "best_restart": res.best_restart,
        "distinct_optima": res.distinct_optima, "deadline_hit": res.deadline_hit,
        "seconds": time.perf_counter() - t0,
    }
    if b["confidence"]:  # see models/graph/confidence.py
        stats["confidence"] = greedy_confidence(
            sc.S if sc.first_order is None else sc.first_order, sc.allowed, sc.neural,
            res.optima, res.optima_scores, res.heads, sc.arc_temperature)
        stats["confidence_samples"] = len(res.optima_scores)
    return Decoded(res.heads, res.score, stats,
                   (res.optima, res.optima_scores, res.optima_counts))


SPEC = DecoderSpec("greedy", "randomized greedy hill-climbing from random trees "
                   "(Zhang et al. 2014)", FIELDS, decode)
