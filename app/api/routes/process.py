"""POST /process: the UDPipe REST endpoint, so UDPipe clients work unchanged.

Fields (form-encoded, multipart, JSON or query string): `data` (required),
`model`, `tokenizer`, `tagger`, `parser`, `input` = conllu | horizontal |
vertical (unused, though still checked, when `tokenizer` is present: `data` is then
raw text, split into sentences; `tokenizer=presegmented` takes one sentence a line),
`output` = conllu. As in UDPipe, CoNLL-U input keeps its tags unless `tagger` is
sent, and every line the parser does not own is written back as it came. `tagger`
is UDPipe's option string for the tagger; deptree reads three values of it:
`tagger=accurate`, `tagger=contextual` or `tagger=fast` (exactly) tags with that one (422
`unknown_tagger` where the model has none); any other value, the empty string
(UDPipe's "tag") included, and no `tagger` at all, use the default tagger
(`default_tagger`: `auto`, the most accurate the model has, unless configured).
`parser` may carry deptree options: `parser=decoder=greedy;restarts=50`. The answer is
`{"model", "acknowledgements", "result"}`. Form fields and the query string are
decoded as strict UTF-8 (400 `invalid_utf8`, as for a JSON body), not with
replacement characters.
"""
from __future__ import annotations

import logging
from typing import Any
from urllib.parse import parse_qsl

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.datastructures import UploadFile

from models.conllu import format_sentence

from ... import metrics
from ...errors import ServiceError
from ...formats import (
    lines,
    parse_options,
    read_conllu_items,
    read_horizontal,
    read_vertical,
    to_conllu,
)
from ...schemas import ErrorResponse, ProcessRequest, ProcessResponse, SafeJSONResponse
from ...service import client_gone, item_from_text, items_from_sentences, sentence_results
from ..deps import ServiceDep, SettingsDep, arrived_at, decode_utf8, load_json

logger = logging.getLogger(__name__)

router = APIRouter(prefix="/process", tags=["udpipe"])

ACKNOWLEDGEMENTS = [("deptree: graph-based dependency parser with per-request decoder and"
                     " budget (UDPipe-compatible REST endpoint)")]
FIELDS = tuple(ProcessRequest.model_fields)
INPUTS = ("conllu", "horizontal", "vertical")
# models.serve.tagging's names, not imported: the gateway loads no parser code
ACCURATE = "accurate"
FAST = "fast"
TAGGERS = (FAST, ACCURATE, "contextual")      # the tagger values /process reads


def _pairs(raw: bytes, where: str) -> dict[str, str]:
    """name=value pairs of a query string or form body, percent-decoded as strict UTF-8."""
    out = {}
    # latin-1 maps bytes to characters one to one, so each name and value is its raw bytes
    for k, v in parse_qsl(raw.decode("latin-1"), keep_blank_values=True, encoding="latin-1"):
        try:
            out[k.encode("latin-1").decode("utf-8")] = v.encode("latin-1").decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ServiceError("invalid_utf8", f"{where} {k[:40]!r} is not valid UTF-8:"
                               f" {exc.reason} at byte {exc.start}") from None
    return out


async def _fields(request: Request, max_bytes: int) -> dict[str, str]:
    out: dict[str, Any] = _pairs(request.scope.get("query_string", b""), "the query parameter")
    if request.method == "POST":
        ctype = request.headers.get("content-type", "").split(";")[0].strip()
        if ctype.endswith("json"):
            data = load_json(await request.body())
            if not isinstance(data, dict):
                raise ServiceError("wrong_type", "the JSON body must be an object")
            out.update(data)
        elif ctype == "application/x-www-form-urlencoded":
            out.update(_pairs(await request.body(), "the form field"))
        elif ctype == "multipart/form-data":
            form = await request.form(max_part_size=max_bytes)
            for k, v in form.multi_items():
                if isinstance(v, UploadFile):
                    v = decode_utf8(await v.read())
                out[k] = v
        elif ctype:
            raise ServiceError("unsupported_media_type", f"unsupported content type {ctype!r}")
    for k in FIELDS:
        if k in out and not isinstance(out[k], str):
            raise ServiceError("wrong_type", f"field {k} must be a string", value=k)
    return out


def _model(name: str | None, cat: dict) -> str | None:
    """Exact name, else the first model whose name starts with it (UDPipe matching)."""
    if not name or name in cat:
        return name
    return next((m for m in sorted(cat) if m.startswith(name)), name)


def _fields_schema() -> dict[str, Any]:
    """ProcessRequest's JSON schema without the null branches: a field is a string or absent."""
    schema = ProcessRequest.model_json_schema()
    for prop in schema["properties"].values():
        branches = [b for b in prop.pop("anyOf", []) if b.get("type") != "null"]
        prop.pop("default", None)
        if branches:
            prop.update(branches[0])
    return schema


_FIELDS_SCHEMA = _fields_schema()
_DOC = {"response_model": ProcessResponse,
        "responses": {code: {"model": ErrorResponse}
                      for code in (400, 401, 413, 415, 422, 503, 504)},
        "summary": "UDPipe-compatible processing (CoNLL-U result)"}
_POST_BODY = {"requestBody": {"required": True, "content": {
    ctype: {"schema": _FIELDS_SCHEMA} for ctype in (
        "application/x-www-form-urlencoded", "multipart/form-data", "application/json")}}}
_GET_QUERY = {"parameters": [
    {"name": name, "in": "query", "required": name in _FIELDS_SCHEMA["required"],
     "schema": {k: v for k, v in prop.items() if k not in ("title", "default")},
     "description": prop.get("description", "")}
    for name, prop in _FIELDS_SCHEMA["properties"].items()]}


@router.post("", operation_id="process_post", openapi_extra=_POST_BODY, **_DOC)
async def process(request: Request, service: ServiceDep, settings: SettingsDep) -> JSONResponse:
    f = await _fields(request, settings.max_body_bytes)
    data = f.get("data")
    if data is None:
        raise ServiceError("missing_input", "the request needs a `data` field")
    output = f.get("output") or "conllu"
    if not output.startswith("conllu"):
        raise ServiceError("unsupported_format", f"output {output!r} is not supported; use"
                           " conllu", value=output)
    fmt = f.get("input") or "conllu"
    if fmt not in INPUTS:        # checked even when `tokenizer` makes it unused
        raise ServiceError("unsupported_format", f"input {fmt!r} is not one of "
                           + ", ".join(INPUTS), value=fmt)
    opts = parse_options(f.get("parser") or "")
    decoder = opts.pop("decoder", None)
    conllu_sents = None
    if "tokenizer" in f:
        if f["tokenizer"] and "presegmented" in f["tokenizer"]:
            items = items_from_sentences([ln for ln in lines(data) if ln.strip()], settings)
        else:
            items = [item_from_text(data, settings)]
    else:
        if len(data) > settings.max_chars:
            raise ServiceError("too_many_characters", f"data exceeds max_chars="
                               f"{settings.max_chars} (got {len(data)})", limit="max_chars",
                               value=settings.max_chars, got=len(data))
        if fmt == "conllu":
            conllu_sents, items = read_conllu_items(data, "tagger" not in f, settings)
        elif fmt == "horizontal":
            items = read_horizontal(data, settings)
        else:
            items = read_vertical(data, settings)
    tagger = f.get("tagger") if f.get("tagger") in TAGGERS else None       # None: default
    plan = service.plan(_model(f.get("model"), service.dispatcher.catalogue()), decoder, opts,
                        items, tagger=tagger, arrived_at=arrived_at(request))
    metrics.IN_FLIGHT.inc()
    try:
        await service.run(plan, client_gone(request.receive))
    finally:
        metrics.IN_FLIGHT.dec()
    if conllu_sents is not None:
        parts = []
        for sent, it, (trees, _) in zip(conllu_sents, plan.items, plan.results):
            tree = trees[0]
            toks = tree["tokens"]
            sent.set_tree([-1] + [t["head"] for t in toks], [""] + [t["deprel"] for t in toks])
            if it.kind == "tokens":          # tagged by the model: write its tags too
                for w, t in zip(sent.words, toks):
                    w.upos, w.xpos, w.lemma = t["upos"], t["xpos"], t["lemma"]
                    if t.get("feats", "_") != "_":
                        w.feats = t["feats"]
            parts.append(format_sentence(sent))
        result = "".join(parts)
    else:
        result = to_conllu(sentence_results(plan))
    return SafeJSONResponse({"model": plan.model, "acknowledgements": ACKNOWLEDGEMENTS,
                             "result": result})


router.get("", operation_id="process_get", openapi_extra=_GET_QUERY, **_DOC)(process)
