"""Transition-based parser with selectional branching (Choi & McCallum, ACL 2013).

Layers (spaCy / Parsito): `system` (transitions, validity), `oracle` (static oracle
for one gold tree), `features` (templates as data, numba extraction), `classifier`
(logistic regression + AdaGrad), `decode` (selectional branching), `model` (files and
the serving API), `train` / `bootstrap` (training only; never imported by serving).

Serving API: `load(directory)`, `decode(model, forms, lemmas, upos, xpos, budget, arc_p,
power)` (arc_p: the neural analyser's arc probabilities, weighed into the moves);
`SPEC` is decoder "selectional" (`models/decoders.py`, listed in
`models/decoder_registry.py`).
"""
from .. import compile_log  # noqa: F401  (kernels live here: it logs their compiles)
from .model import SPEC, TransitionModel, decode, load

__all__ = ["SPEC", "TransitionModel", "decode", "load"]
