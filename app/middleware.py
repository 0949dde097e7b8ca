"""ASGI middleware: the request body size limit, the number of requests at once, the
request latency metric, request ids and the JSON 500 for an unhandled error (keeping
the connection open).

The body limit is enforced on the bytes as they arrive (a Content-Length above
the limit is refused before reading), so an oversized body never sits in memory.
"""
from __future__ import annotations

import json
import logging
import re
import time
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from worker.logsafe import REQUEST_ID

from . import metrics
from .errors import ServiceError, error_response

logger = logging.getLogger(__name__)


class _TooLarge(Exception):
    pass


class _HttpMiddleware:
    """Pure ASGI middleware for HTTP requests (`http`); other scopes pass through."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.http(scope, receive, send)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        raise NotImplementedError


class _StartTracker:
    """A `send` that remembers whether the response has started (after which an error
    can no longer be answered, only the connection closed)."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = False

    async def __call__(self, msg: Message) -> None:
        if msg["type"] == "http.response.start":
            self.started = True
        await self.send(msg)


class BodyLimitMiddleware(_HttpMiddleware):
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        super().__init__(app)
        self.max_bytes = max_bytes

    async def _refuse(self, send: Send, got: int | None) -> None:
        err = {"code": "body_too_large", "limit": "max_body_bytes", "value": self.max_bytes,
               "message": f"the request body exceeds max_body_bytes={self.max_bytes}"
               + (f" (got {got})" if got is not None else "")}
        if got is not None:
            err["got"] = got
        metrics.ERRORS.labels("body_too_large").inc()
        body = json.dumps({"error": err}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        for k, v in scope.get("headers", ()):
            if k == b"content-length":
                try:
                    n = int(v)
                except ValueError:
                    n = 0
                if n > self.max_bytes:
                    await self._refuse(send, n)
                    return
        seen = 0
        sent = _StartTracker(send)

        async def limited_receive() -> Message:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge()
            return msg

        try:
            await self.app(scope, limited_receive, sent)
        except _TooLarge:
            if not sent.started:
                await self._refuse(send, None)


class ConcurrencyLimitMiddleware(_HttpMiddleware):
    """At most `limit` requests at once, from a complete request head to the end of the
    answer (a slow body counts, an idle connection does not: see app.connections);
    beyond it 503 `overloaded` with Retry-After at once, rather than a wait."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        super().__init__(app)
        self.limit = limit
        self.active = 0

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.active >= self.limit:
            resp = error_response(ServiceError(
                "overloaded", f"{self.active} requests are being served, the limit is"
                f" max_connections={self.limit}; retry shortly", limit="max_connections",
                value=self.limit))
            await resp(scope, receive, send)
            return
        self.active += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.active -= 1


class InternalErrorMiddleware(_HttpMiddleware):
    """An exception no handler took becomes the JSON 500 `internal_error` here. Starlette's
    own last resort answers too but then re-raises, and uvicorn closes the connection, so
    the client's next request on that keep-alive connection is lost with it."""

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        sent = _StartTracker(send)
        try:
            await self.app(scope, receive, sent)
        except Exception:
            if sent.started:   # half an answer is out: only closing the connection is honest
                raise
            logger.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            resp = error_response(ServiceError("internal_error", "internal error", status=500))
            await resp(scope, receive, send)


class MetricsMiddleware(_HttpMiddleware):
    """deptree_request_seconds by route template, method and status; error counts."""

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        t0 = time.perf_counter()
        status = 500

        async def send_wrapper(msg: Message) -> None:
            nonlocal status
            if msg["type"] == "http.response.start":
                status = msg["status"]
            await send(msg)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            route = scope.get("route")
            path = getattr(route, "path", None) or "unmatched"
            metrics.REQUEST_SECONDS.labels(path, scope.get("method", ""), str(status)).observe(
                time.perf_counter() - t0)


_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


class RequestIdMiddleware(_HttpMiddleware):
    """Every answer carries an X-Request-ID: the client's (if it is 1-64 characters of
    [A-Za-z0-9._-], so no user string reaches a log line unbounded) or a new one. The
    request's arrival (`state.arrived_at`, time.time() once its head is in) is noted
    here, the outermost layer: a deadline counts from it, so a slow body uses it up."""

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        given = dict(scope.get("headers") or []).get(b"x-request-id", b"").decode("latin-1")
        rid = given if _REQUEST_ID.fullmatch(given) else uuid.uuid4().hex
        state = scope.setdefault("state", {})
        state["request_id"] = rid
        state["arrived_at"] = time.time()
        REQUEST_ID.set(rid)          # every log line written for this request carries it

        async def with_id(msg: Message) -> None:
            if msg["type"] == "http.response.start":
                msg["headers"] = [*msg.get("headers", []), (b"x-request-id", rid.encode())]
            await send(msg)

        await self.app(scope, receive, with_id)
