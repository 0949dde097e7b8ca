"""The graph decoders, one module each (`greedy`, `mst`, `sampling`, `bgi`): each holds
its `DecoderSpec` (budget fields and defaults, see `models/decoders.py`) beside its
decode function, which takes the arc space of a sentence (`Scorer`) and a validated
budget and returns a `Decoded`. A new decoder is a module here, listed below.

The greedy, sampling and bgi kernels are imported by their decode function, on first
use: kernels with explicit signatures compile when their module is imported (see
features.py), so a process that never uses a decoder never compiles them, and a
worker warming `mst` first is not held up by the others.
"""
from __future__ import annotations

from ...decoders import BudgetError, DecoderSpec, deadline_of, register, remaining_budget
from . import bgi, greedy, mst, sampling
from .base import Decoded, Scorer

# registry order: the order GET /models lists them and a worker warms them
DECODERS: dict[str, DecoderSpec] = {s.name: s for s in (greedy.SPEC, mst.SPEC, sampling.SPEC,
                                                         bgi.SPEC)}
register(*DECODERS.values())

# a spec is its decoder: calling it validates the budget, fills the defaults and decodes
decode_greedy, decode_mst_exact, decode_sampling, decode_bgi = DECODERS.values()

__all__ = ["DECODERS", "BudgetError", "Decoded", "DecoderSpec", "Scorer", "deadline_of",
           "decode_bgi", "decode_greedy", "decode_mst_exact", "decode_sampling",
           "remaining_budget"]
