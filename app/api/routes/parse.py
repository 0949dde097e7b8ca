"""POST /parse: sentences or text in, trees (JSON or CoNLL-U) out."""
from __future__ import annotations

import logging

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse, Response

from ... import metrics
from ...errors import ServiceError
from ...formats import to_conllu
from ...schemas import ErrorResponse, ParseRequest, ParseResponse, SafeJSONResponse
from ...service import client_gone, item_from_text, items_from_sentences, sentence_results
from ..deps import ParseBody, ServiceDep, SettingsDep, arrived_at

logger = logging.getLogger(__name__)

router = APIRouter(prefix="/parse", tags=["parse"])

CONLLU = "text/x-conllu"
_ERRORS = {code: {"model": ErrorResponse} for code in (400, 401, 413, 415, 422, 503, 504)}


@router.post(
    "", response_model=ParseResponse,
    responses={200: {"content": {CONLLU: {"example": "# sent_id = 1\n# text = The cat sat.\n"
                                          "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t"
                                          "TokenRange=0:3\n...\n"}}}, **_ERRORS},
    openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
        "schema": ParseRequest.model_json_schema(),
        "examples": {f"example {i + 1}": {"value": v}
                     for i, v in enumerate(ParseRequest.model_config["json_schema_extra"]
                                           ["examples"])}}}}},
    summary="Parse sentences (raw strings or token lists) or a whole text")
async def parse(req: ParseBody, request: Request, service: ServiceDep,
                settings: SettingsDep) -> Response:
    if req.sentences is not None and req.text is not None:
        raise ServiceError("conflicting_input", "send either `sentences` or `text`, not both")
    if req.sentences is not None:
        items = items_from_sentences(req.sentences, settings)
    elif req.text is not None:
        items = [item_from_text(req.text, settings)]
    else:
        raise ServiceError("missing_input", "the request needs `sentences` or `text`")
    plan = service.plan(req.model, req.decoder, dict(req.model_extra or {}), items,
                        tagger=req.tagger, arrived_at=arrived_at(request))
    metrics.IN_FLIGHT.inc()
    try:
        await service.run(plan, client_gone(request.receive))
    finally:
        metrics.IN_FLIGHT.dec()
    sentences = sentence_results(plan)
    output = req.output or ("conllu" if CONLLU in request.headers.get("accept", "") else "json")
    if output == "conllu":
        return PlainTextResponse(to_conllu(sentences), media_type=CONLLU)
    return SafeJSONResponse({"model": plan.model, "version": plan.version,
                             "decoder": plan.decoder, "tagger": plan.tagger,
                             "budget": plan.budget,
                             "sentences": sentences})
