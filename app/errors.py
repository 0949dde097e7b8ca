"""Service errors: one catalogue of codes, one JSON shape, one place mapping to HTTP.

Every error answer is `{"error": {"code", "message", "limit", "value"}}` (plus
`"got"` when a limit was exceeded: `value` is the limit's value, `got` what the
request had). Size limits answer 413, bad values 422, unreadable bodies 400,
missing capacity 503, a timeout 504. `DeptreeError`s raised by the models
(budget, model) and refusals from workers (`worker.protocol.JobError`) go
through the same mapping, so nothing a client sends ends in a 500.
"""
from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from models.decoders import BudgetError
from models.errors import DeptreeError
from worker.protocol import JobError, LimitError

from .schemas import SafeJSONResponse

logger = logging.getLogger(__name__)

# code -> HTTP status; the message is written where the error is raised, with the
# offending value and the limit in it.
CODES: dict[str, int] = {
    # 400: the body cannot be read
    "malformed_json": 400, "invalid_utf8": 400, "bad_request": 400,
    # 401: the API key is missing or wrong; 403: admin actions without an admin key set
    "unauthorized": 401, "admin_disabled": 403,
    # 413: size limits
    "body_too_large": 413, "too_many_sentences": 413, "too_many_tokens": 413,
    "too_many_characters": 413,
    # 415
    "unsupported_media_type": 415,
    # 422: values
    "invalid_request": 422, "wrong_type": 422, "missing_input": 422, "conflicting_input": 422,
    "empty_request": 422, "empty_sentence": 422, "empty_token": 422, "control_character": 422,
    "line_separator": 422, "invalid_unicode": 422, "unknown_model": 422,
    "unknown_decoder": 422, "unknown_tagger": 422,
    "field_not_applicable": 422, "budget_limit": 422, "invalid_budget": 422,
    "model_error": 422, "invalid_input": 422, "invalid_conllu": 422, "unsupported_format": 422,
    # 404/405 from routing
    "not_found": 404, "method_not_allowed": 405,
    # capacity
    "not_ready": 503, "no_workers": 503, "worker_crashed": 503, "dispatch_unavailable": 503,
    "overloaded": 503,
    "timeout": 504, "expired": 504, "deadline_exceeded": 504, "cache_unavailable": 503,
    # the client left before its answer (logged; nobody reads the body)
    "client_closed": 499,
    "not_supported": 501,
    "internal_error": 500,
}
KIND_STATUS = {"limit": 413, "input": 422, "budget": 422, "model": 422, "crashed": 503,
               "internal": 500}


MAX_MESSAGE = 1000      # characters of an error message
MAX_VALUE = 200         # characters of a quoted string value


def _cut(v: Any, n: int) -> Any:
    if isinstance(v, str) and len(v) > n:
        return f"{v[:n]}... ({len(v) - n} more characters)"
    return v


class ServiceError(DeptreeError):
    def __init__(self, code: str, message: str, *, limit: str | None = None, value: Any = None,
                 got: Any = None, status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.limit = limit
        self.value = value
        self.got = got
        self.status = status or CODES.get(code, 422)

    def body(self) -> dict[str, Any]:
        """The JSON error; quoted client strings are cut (a 1 MB model name must not
        come back as a 1 MB error)."""
        err = {"code": self.code, "message": _cut(self.message, MAX_MESSAGE),
               "limit": self.limit, "value": _cut(self.value, MAX_VALUE)}
        if self.got is not None:
            err["got"] = _cut(self.got, MAX_VALUE)
        return {"error": err}


def limit_error(code: str, limit: str, value: Any, got: Any, what: str) -> ServiceError:
    """A 413 naming the limit: e.g. "300 sentences exceed max_sentences=256"."""
    return ServiceError(code, f"{what} exceeds {limit}={value} (got {got})", limit=limit,
                        value=value, got=got)


def from_reply_error(err: dict[str, Any]) -> ServiceError:
    """A worker's error payload (worker.protocol) as a ServiceError."""
    status = CODES.get(err.get("code", ""), KIND_STATUS.get(err.get("kind", ""), 500))
    if err.get("kind") == "limit":
        status = 413
    return ServiceError(err.get("code", "internal_error"), err.get("message", ""),
                        limit=err.get("limit"), value=err.get("value"), got=err.get("got"),
                        status=status)


def to_service_error(exc: BaseException) -> ServiceError:
    if isinstance(exc, ServiceError):
        return exc
    if isinstance(exc, (JobError, LimitError, BudgetError)):
        return ServiceError(exc.code, exc.message, limit=exc.limit, value=exc.value, got=exc.got,
                            status=413 if isinstance(exc, LimitError) else None)
    if isinstance(exc, DeptreeError):
        return ServiceError("invalid_input", str(exc))
    return ServiceError("internal_error", "internal error", status=500)


def error_response(err: ServiceError, headers: dict[str, str] | None = None) -> JSONResponse:
    """The error body; it renders even when the message or value quotes a lone surrogate."""
    from . import metrics

    metrics.ERRORS.labels(err.code).inc()
    headers = dict(headers or {})
    if err.status == 503:
        headers["Retry-After"] = "2"
    return SafeJSONResponse(err.body(), status_code=err.status, headers=headers or None)


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(request: Request) -> str:
    """Every method some route answers at this path, for a 405's Allow header (Starlette
    names the methods of the first route at the path only: POST, where /process is
    GET and POST)."""
    allowed = []
    for method in _METHODS:
        scope = {"type": "http", "method": method, "path": request.url.path,
                 "root_path": request.scope.get("root_path", ""), "headers": []}
        if any(r.matches(dict(scope))[0] == Match.FULL for r in request.app.router.routes):
            allowed.append(method)
    return ", ".join(allowed)


def _validation_message(exc: RequestValidationError) -> tuple[str, str]:
    errs = exc.errors()
    first = errs[0] if errs else {}
    if first.get("type") == "json_invalid":
        return "malformed_json", f"malformed JSON: {first.get('ctx', {}).get('error', '')}"
    loc = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
    return "wrong_type", f"{loc or 'body'}: {first.get('msg', 'invalid value')}"


def install_handlers(app: FastAPI) -> None:
    @app.exception_handler(ServiceError)
    async def _service(_: Request, exc: ServiceError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(DeptreeError)
    async def _deptree(_: Request, exc: DeptreeError) -> JSONResponse:
        return error_response(to_service_error(exc))

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        code, msg = _validation_message(exc)
        return error_response(ServiceError(code, msg))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {400: "bad_request", 404: "not_found", 405: "method_not_allowed",
                413: "body_too_large"}.get(exc.status_code, "bad_request")
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = allowed_methods(request) or headers.get("Allow", "")
        return error_response(ServiceError(code, str(exc.detail), status=exc.status_code),
                              headers=headers)

    @app.exception_handler(Exception)
    async def _internal(_: Request, exc: Exception) -> JSONResponse:
        logger.exception("unhandled error")
        return error_response(ServiceError("internal_error", "internal error", status=500))
