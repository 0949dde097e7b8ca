"""Transition-based parser with selectional branching (Choi & McCallum, ACL 2013).

Layers (spaCy / Parsito): `system` (transitions, validity), `oracle` (static oracle
for one gold tree), `features` (templates as data, numba extraction), `classifier`
(logistic regression + AdaGrad), `decode` (selectional branching), `model` (files and
the serving API), `train` / `bootstrap` (training only; never imported by serving).

Serving API: `load(directory)`, `decode(model, forms, lemmas, upos, xpos, budget)`;
`BUDGET_FIELDS` and `DEFAULTS` describe the budget of decoder "selectional".
"""
from .. import compile_log  # noqa: F401  (kernels live here: it logs their compiles)
from .model import (
                    BEAM_DEFAULT,
                    BEAM_LIMITS,
                    MARGIN_DEFAULT,
                    MARGIN_LIMITS,
                    TransitionModel,
                    decode,
                    load,
)

BUDGET_FIELDS = ("beam", "margin", "deadline_ms")
DEFAULTS = {"beam": BEAM_DEFAULT, "margin": MARGIN_DEFAULT}

__all__ = ["BEAM_LIMITS", "BUDGET_FIELDS", "DEFAULTS", "MARGIN_LIMITS", "TransitionModel",
           "decode", "load"]
