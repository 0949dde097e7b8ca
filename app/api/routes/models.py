"""GET /models: what the workers serve (versions, languages, labels, decoders, budgets,
taggers)."""
from __future__ import annotations

import logging

from fastapi import APIRouter

from models.decoders import DecoderSpec

from ...service import default_model, model_taggers
from ..deps import DispatcherDep, SettingsDep

logger = logging.getLogger(__name__)

router = APIRouter(prefix="/models", tags=["models"])


@router.get("", summary="Loaded models, their decoders and default budgets")
async def list_models(dispatcher: DispatcherDep, settings: SettingsDep) -> dict:
    """`models` is keyed by name (as UDPipe's /models is), each entry with `version`,
    `language`, `labels`, `components`, `taggers` (what a request's `tagger` may be:
    [], ["fast"], ["fast", "accurate"] or ["fast", "accurate", "contextual"], the most
    accurate last), `encoder` (the pretrained encoder the `contextual` tagger reads: name,
    package versions, layers; null without one), `unavailable` (taggers the model has
    that this install cannot run, each with why: the contextual one where the
    encoder's package is not installed, with the command that installs it),
    `graph` (the graph model's `order`; `tensor_rank`, 0 without the low-rank tensor
    arc scores, which every graph decoder then reads; `global_features`, whether it
    scores the whole tree's global features: `greedy` and `sampling` use them, `mst`
    and `bgi` do not), `arc_weight` (the weight of the neural arc
    scores when the graph decoders' `neural` is unset and the accurate tagger tags; null
    for a model without them), `analysers` (how many neural analysers the model averages;
    where several, every decoder has the budget field `analysers` to use fewer, faster),
    `decoders` -> {doc, fields, defaults, params} (the
    defaults include the settings' `default_budget`; `params`: each field's kind,
    default, bounds `lo`/`hi` (`lo_open`: lo excluded) or `choices`, `nullable`, the
    server's `cap` and a one-line `doc`) and `warm`: the decoders every worker has compiled
    (on a fresh install the others compile in the background; a request for one of them
    waits until it is ready)."""
    cat = dispatcher.catalogue()
    models = {}
    for name, info in cat.items():
        info = dict(info)
        info["taggers"] = model_taggers(info)
        decs = {}
        for dec, d in info.get("decoders", {}).items():
            defaults = dict(d.get("defaults", {}))
            defaults.update({k: v for k, v in settings.default_budget.get(dec, {}).items()
                             if k in d.get("fields", ())})
            caps = DecoderSpec.from_description(dec, d).caps(settings.budget_caps)
            params = {k: {**p, **({"cap": caps[k]} if k in caps else {})}
                      for k, p in d.get("params", {}).items()}
            decs[dec] = {**d, "defaults": defaults, "params": params}
        info["decoders"] = decs
        models[name] = info
    return {"models": models, "default_model": default_model(settings, cat) if cat else None,
            "default_decoder": settings.default_decoder,
            "default_tagger": settings.default_tagger}
