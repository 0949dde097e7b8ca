"""Dependencies of the routes (`Annotated` aliases, FastAPI full-stack template style).

The running service objects (settings, dispatcher, cache, ParseService) are
created by the lifespan and kept on `app.state`; routes reach them only through
these aliases. `read_parse_request` reads the JSON body itself (whatever the
declared content type, so a plain `curl -d '{...}'` works) so that invalid
UTF-8, non-finite numbers and malformed JSON get our 400 errors instead of a
generic one.
"""
from __future__ import annotations

import hmac
import json
import logging
from typing import Annotated

from fastapi import Depends, Request
from pydantic import ValidationError

from ..cache import NullCache
from ..core.config import Settings, get_settings
from ..dispatch.base import Dispatcher
from ..errors import ServiceError
from ..schemas import ParseRequest
from ..service import ParseService

logger = logging.getLogger(__name__)


def _service(request: Request) -> ParseService:
    svc = getattr(request.app.state, "service", None)
    if svc is None:
        raise ServiceError("not_ready", "the service is starting")
    return svc


def _dispatcher(request: Request) -> Dispatcher:
    return _service(request).dispatcher


def _cache(request: Request) -> NullCache:
    return _service(request).cache


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def arrived_at(request: Request) -> float | None:
    """time.time() when the request's head came in (RequestIdMiddleware), if noted."""
    return request.scope.get("state", {}).get("arrived_at")


def decode_utf8(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ServiceError("invalid_utf8", f"the request body is not valid UTF-8: byte"
                           f" 0x{raw[exc.start]:02x} at offset {exc.start}") from None


def load_json(raw: bytes) -> object:
    text = decode_utf8(raw)
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        raise ServiceError("malformed_json", f"malformed JSON: {exc}") from None
    except RecursionError:          # e.g. 100,000 '[': the decoder's recursion guard
        raise ServiceError("malformed_json", "malformed JSON: arrays or objects nested"
                           " too deeply") from None


async def read_parse_request(request: Request) -> ParseRequest:
    # Any content type is read as JSON (curl -d sends a form type by default) except
    # multipart, which is a form for certain.
    ctype = request.headers.get("content-type", "").split(";")[0].strip()
    if ctype == "multipart/form-data":
        raise ServiceError("unsupported_media_type", "send a JSON body; for form fields use"
                           " POST /process")
    data = load_json(await request.body())
    if not isinstance(data, dict):
        raise ServiceError("wrong_type", f"the body must be a JSON object, got"
                           f" {type(data).__name__}")
    try:
        return ParseRequest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"] if not str(p).startswith(("str", "list[")))
        raise ServiceError("wrong_type", f"{loc or 'body'}: {first['msg']}",
                           value=loc or None) from None


def _same_secret(given: str, key: str) -> bool:
    """Constant-time comparison of a header value with a configured key."""
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), key.encode("utf-8"))


def require_api_key(request: Request, settings: Annotated[Settings, Depends(get_settings)]
                    ) -> None:
    """401 unless the request carries the configured API key (no key set: open)."""
    if not settings.api_key:
        return
    given = request.headers.get("x-api-key", "")
    auth = request.headers.get("authorization", "")
    if not given and auth.lower().startswith("bearer "):
        given = auth[7:].strip()
    if not _same_secret(given, settings.api_key):
        raise ServiceError("unauthorized", "missing or wrong API key (header X-API-Key)")


def require_admin_key(request: Request,
                      settings: Annotated[Settings, Depends(get_settings)]) -> None:
    """Admin actions need the admin key (header X-Admin-Key), which is never the API
    key; with no admin key configured they are refused (403)."""
    if not settings.admin_key:
        raise ServiceError("admin_disabled", "admin actions are disabled: set DEPTREE_ADMIN_KEY")
    given = request.headers.get("x-admin-key", "")
    if not _same_secret(given, settings.admin_key):
        raise ServiceError("unauthorized", "missing or wrong admin key (header X-Admin-Key)")


SettingsDep = Annotated[Settings, Depends(get_settings)]
ServiceDep = Annotated[ParseService, Depends(_service)]
DispatcherDep = Annotated[Dispatcher, Depends(_dispatcher)]
CacheDep = Annotated[NullCache, Depends(_cache)]
ParseBody = Annotated[ParseRequest, Depends(read_parse_request)]
