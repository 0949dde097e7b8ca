"""Decoder `bgi`: greedy graph inference with partial-part predictions (Tchernowitz et
al. 2016), its budget and its ensemble partner; the search is `decode_bgi.py`."""
from __future__ import annotations

import time

import numpy as np

from ...decoders import DEADLINE, BudgetError, DecoderSpec, Field, deadline_of, remaining_budget
from . import greedy, mst
from .base import Decoded, Scorer

# the graph decoders `ensemble_with` may name (selectional's tree comes from the pipeline)
PARTNERS = {spec.name: spec for spec in (greedy.SPEC, mst.SPEC)}

# beam, swaps, alpha, beta tuned on an en_ewt dev subset (bench/journal/05-bgi.md)
# start: where the swaps start; not in the paper, the first-order MST as a second start:
# "both" (default; the MST joins the beam) gives en_ewt dev 88.63 UAS against the
# paper's "bgi" 87.54, at 0.83x its speed; "max" (one search, from the best of the
# beam's trees and the MST) 88.16 at 0.95x (bench/journal/05-bgi.md). Also with ensemble_with:
# with selectional, 89.34 against 89.22 from "bgi" (the cluster model of 2026-11-26).
# "selectional" is the transition parser: the pipeline runs it first and hands its tree
# over as `ensemble_heads` (the graph model alone cannot run it).
FIELDS = (
    Field("beam", "int", 1, "partial trees kept while the tree grows", lo=1, hi=1024,
          cap=64),
    Field("swaps", "int", 20, "rounds of the best single-arc swap after the search", lo=0,
          hi=1000),
    Field("alpha", "number", 2.0, "sharpness of the arc probabilities", lo=0, hi=100,
          lo_open=True),
    Field("beta", "number", 0.3, "balance of an arc's loss (1) against its gain (0)", lo=0,
          hi=1),
    Field("ensemble_with", "choice", None, "bias the search toward this decoder's tree",
          choices=("greedy", "mst", "selectional"), nullable=True),
    Field("start", "choice", "both", "where the swaps start: bgi (the beam's trees), max "
          "(the best of them and the first-order MST) or both", choices=("bgi", "max", "both")),
    # decode_bgi.MIN_PART_PROB, the search's own default (a test keeps them equal); on 300
    # en_ewt dev sentences 0.01: 87.61 UAS at 57 us/token, 0.1: 87.41 at 36
    # (bench/journal/05-bgi.md, "Earlier runs on dev subsets")
    Field("min_part_prob", "number", 0.01, "leave out higher-order parts whose arcs' "
          "probability product is below this: faster, a little less accurate", lo=0, hi=1),
    DEADLINE,
)


def _given_heads(heads, n: int) -> np.ndarray:
    """Another parser's tree (heads of words 1..n) as a heads array with the root slot."""
    if heads is None:
        raise BudgetError("ensemble_with 'selectional' needs a model with a transition parser")
    arr = np.asarray(heads, dtype=np.int64)
    if arr.shape != (n,) or arr.min(initial=0) < 0 or arr.max(initial=0) > n:
        raise BudgetError(f"ensemble heads must be {n} integers in 0..{n}")
    return np.concatenate([[-1], arr])


def decode(sc: Scorer, b: dict, ensemble_heads=None) -> Decoded:
    """Greedy graph inference with partial-part predictions (Tchernowitz et al.
    2016): Algorithm 2, a beam, `swaps` rounds of arc swaps and, with
    `ensemble_with`, a bias toward that decoder's tree (`ensemble_heads` for
    selectional, which the graph model cannot run); see decode_bgi.py."""
    from ..decode_bgi import run_bgi  # compiles on import: see __init__

    other = b["ensemble_with"]
    deadline = deadline_of(b)
    t0 = time.perf_counter()
    if other == "selectional":
        bias = _given_heads(ensemble_heads, sc.S.shape[0] - 1)
    else:
        # the partner decodes within the same deadline (its default budget otherwise)
        bias = PARTNERS[other](sc, remaining_budget(deadline)).heads \
            if other is not None else None
    heads, score, stats = run_bgi(sc, b["beam"], b["swaps"], b["alpha"], b["beta"], bias,
                                  deadline, min_part_prob=b["min_part_prob"], start=b["start"])
    stats["ensemble_with"] = other
    stats["seconds"] = time.perf_counter() - t0
    return Decoded(heads, score, stats)


SPEC = DecoderSpec("bgi", "greedy graph inference with partial-part predictions "
                   "(Tchernowitz et al. 2016)", FIELDS, decode)
