"""The graph decoders, one module each (`greedy`, `mst`, `sampling`, `bgi`): each holds
its `DecoderSpec` (budget fields and defaults, see `models/decoders.py`) beside its
decode function, which takes the arc space of a sentence (`Scorer`) and a `Budget` and
returns a `Decoded`. A new decoder is a module here, listed in
`models/decoder_registry.py`.

The greedy, sampling and bgi kernels are imported by their decode function, on first
use: kernels with explicit signatures compile when their module is imported (see
features.py), so a process that never uses a decoder never compiles them, and a
worker warming `mst` first is not held up by the others.
"""
from __future__ import annotations

from ...decoders import Budget, BudgetError, DecoderSpec, deadline_of, remaining_budget
from . import bgi, greedy, mst, sampling
from .base import Decoded, Scorer

# a spec is its decoder: calling it with a plain budget checks it, fills the defaults
# and decodes (a library caller's; the service hands it a checked `Budget`)
decode_greedy = greedy.SPEC
decode_mst_exact = mst.SPEC
decode_sampling = sampling.SPEC
decode_bgi = bgi.SPEC

__all__ = ["Budget", "BudgetError", "Decoded", "DecoderSpec", "Scorer", "deadline_of",
           "decode_bgi", "decode_greedy", "decode_mst_exact", "decode_sampling",
           "remaining_budget"]
