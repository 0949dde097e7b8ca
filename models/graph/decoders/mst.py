"""Decoder `mst`: the exact first-order tree (Chu-Liu-Edmonds, `decode_mst.py`)."""
from __future__ import annotations

import time

import numpy as np

from ...decoders import DEADLINE, DecoderSpec
from ..decode_mst import decode_mst
from .base import Decoded, Scorer


def decode(sc: Scorer, budget: dict) -> Decoded:
    """Exact first-order MST (Chu-Liu-Edmonds) under the model's first-order model
    (for a higher-order model: the first-order model it prunes with) over the same
    pruned arcs the other decoders search, so the tree's score under the full
    model (reported) is always finite."""
    t0 = time.perf_counter()
    if sc.first_order is not None:
        heads = decode_mst(np.where(sc.allowed, sc.first_order, -np.inf))
    else:
        heads = decode_mst(sc.S)
    score = sc.score(heads) if sc.order > 1 \
        else float(sum(sc.S[heads[1:], np.arange(1, len(heads))]))
    return Decoded(heads, score, {"seconds": time.perf_counter() - t0, "deadline_hit": False})


SPEC = DecoderSpec("mst", "exact first-order maximum spanning tree (Chu-Liu-Edmonds)",
                   (DEADLINE,), decode)
