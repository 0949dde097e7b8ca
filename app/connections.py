"""The HTTP/1.1 protocol `deptree serve` runs: uvicorn's (httptools) plus a request-head
timeout, so a connection that sends nothing, or never ends its request head, is closed.

uvicorn times out only a connection idle *after* an answer (`timeout_keep_alive`); one
that never sends a byte lived forever and, counted against `limit_concurrency`, a few
of them locked every client out (issue 20). Here the timer runs from the moment the
server waits for a request head (accepted, or an answer sent on a kept-alive
connection) until the head is complete; then the app has the request. Request slots are
counted by `app.middleware.ConcurrencyLimitMiddleware`, per request, not per connection.
"""
from __future__ import annotations

import asyncio
import logging

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

logger = logging.getLogger(__name__)


class HeadTimeoutProtocol(HttpToolsProtocol):
    """HttpToolsProtocol that closes a connection whose request head takes longer than
    `head_timeout_s` (set by `head_timeout_protocol`)."""

    head_timeout_s = 10.0

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None

    def _arm(self) -> None:
        self._disarm()
        self._head_timer = self.loop.call_later(self.head_timeout_s, self._head_timeout)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timeout(self) -> None:
        self._head_timer = None
        waiting = self.cycle is None or self.cycle.response_complete
        if waiting and not self.transport.is_closing():
            logger.debug("closing a connection with no request head after %gs",
                         self.head_timeout_s)
            self.transport.close()

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()                # waiting for the next head on a kept-alive connection

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def head_timeout_protocol(seconds: float) -> type[HeadTimeoutProtocol]:
    """The protocol class to give uvicorn (`http=`), closing heads slower than `seconds`."""
    return type("HeadTimeoutProtocol", (HeadTimeoutProtocol,), {"head_timeout_s": seconds})
