"""UDPipe's REST API under one prefix, /udpipe: `models` and `process` where a UDPipe
client looks for them.

A UDPipe client is given the service's base URL and calls BASE/models and BASE/process
(`udpipe2_client.py --service`, UDPipe's REST documentation); with BASE =
http://HOST:PORT/udpipe it works unchanged. `GET|POST /udpipe/models` answers UDPipe's
shape, `{"models": {NAME: ["tokenizer", "tagger", "parser"]}, "default_model": NAME}`
(each model lists the components it has, in that order); deptree's own `GET /models`
keeps its richer shape. `GET|POST /udpipe/process` is deptree's `/process`
(`routes/process.py`): same fields, same answer.
"""
from __future__ import annotations

import logging

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict

from ..deps import ServiceDep
from . import process

logger = logging.getLogger(__name__)

PREFIX = "/udpipe"
COMPONENTS = ("tokenizer", "tagger", "parser")  # UDPipe's names and order

router = APIRouter(prefix=PREFIX, tags=["udpipe"])          # public, as /models is
process_router = APIRouter(prefix=PREFIX, tags=["udpipe"])  # behind the API key, as /process


class UDPipeModelsResponse(BaseModel):
    """UDPipe's answer to `models`."""

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "models": {"en_ewt": ["tokenizer", "tagger", "parser"]}, "default_model": "en_ewt"}]})

    models: dict[str, list[str]]
    default_model: str


def udpipe_models(catalogue: dict[str, dict], default: str) -> UDPipeModelsResponse:
    """The workers' catalogue in UDPipe's shape."""
    models = {name: [c for c in COMPONENTS if c in info.get("components", ())]
              for name, info in catalogue.items()}
    return UDPipeModelsResponse(models=models, default_model=default)


async def list_models(service: ServiceDep) -> UDPipeModelsResponse:
    """Models and their components, as UDPipe's `models` method lists them."""
    default, _ = service.model_info(None)  # 503 until a worker has loaded its models
    return udpipe_models(service.dispatcher.catalogue(), default)


_MODELS_DOC = {"response_model": UDPipeModelsResponse,
               "responses": {code: {"model": process.ErrorResponse} for code in (422, 503)},
               "summary": "UDPipe-compatible model list"}
router.get("/models", operation_id="udpipe_models_get", **_MODELS_DOC)(list_models)
router.post("/models", operation_id="udpipe_models_post", **_MODELS_DOC)(list_models)

process_router.post("/process", operation_id="udpipe_process_post",
                    openapi_extra=process._POST_BODY, **process._DOC)(process.process)
process_router.get("/process", operation_id="udpipe_process_get",
                   openapi_extra=process._GET_QUERY, **process._DOC)(process.process)
