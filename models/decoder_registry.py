"""Every decoder deptree serves, listed once, here: the order of `DECODERS` is the order
`GET /models` lists them and a worker warms them (the graph decoders first, then the
transition parser's). A new decoder is a module with its `SPEC` (`models/decoders.py`),
added to the tuple below: nothing registers itself on import.
"""
from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from models.decoders import DecoderSpec
from models.graph.decoders import bgi, greedy, mst, sampling
from models.transition.model import SPEC as SELECTIONAL_SPEC

DECODERS: Mapping[str, DecoderSpec] = MappingProxyType({spec.name: spec for spec in (
    greedy.SPEC, mst.SPEC, sampling.SPEC, bgi.SPEC, SELECTIONAL_SPEC)})

# the decoders of the graph model (GraphModel.decode), in the same order
GRAPH_DECODERS: Mapping[str, DecoderSpec] = MappingProxyType(
    {name: spec for name, spec in DECODERS.items() if spec.component == "graph"})
