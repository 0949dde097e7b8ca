"""Log lines that no client can flood or forge: bounded length, escaped control
characters, and the request id of the request being served.

`configure_logging(level)` is what every deptree process (gateway, local and
stream workers, the CLI) installs on the root logger. The request id lives in a
context variable: the gateway's request-id middleware sets it for the request's
task, a worker sets it from the job it is decoding, so a line written anywhere
while serving a request carries `[rid]`. (In worker/ because app/ imports
worker/, never the other way round.)
"""
from __future__ import annotations

import contextvars
import logging
import re
import sys

REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("deptree_request_id",
                                                                  default="-")
MAX_MESSAGE_CHARS = 2000
FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def bound(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """`text` with control characters, line breaks and lone surrogates escaped and
    cut to `limit` characters (the cut says how much was dropped)."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256
                        else f"\\u{ord(m.group()):04x}", text.replace("\n", "\\n"))
    if len(text) > limit:
        text = f"{text[:limit]}...[{len(text) - limit} more chars]"
    return text


class SafeFormatter(logging.Formatter):
    """Bounds and escapes the message (one record = one line of bounded size); a
    traceback follows on continuation lines marked `  | `, bounded too."""

    def __init__(self, fmt: str = FORMAT, limit: int = MAX_MESSAGE_CHARS) -> None:
        super().__init__(fmt)
        self.limit = limit

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = bound(record.message, self.limit)
        return super().formatMessage(record)

    def formatException(self, ei) -> str:
        # Tracebacks stay multi-line for people, but every continuation line is
        # marked, so nothing in an exception message can pass for a record of its own.
        text = bound(super().formatException(ei).replace("\n", "\0"), 4 * self.limit)
        return "  | " + text.replace("\\x00", "\n  | ")

    def format(self, record: logging.LogRecord) -> str:
        if not hasattr(record, "request_id"):
            record.request_id = REQUEST_ID.get()
        return super().format(record)


def configure_logging(level: int = logging.INFO, stream=None) -> None:
    """Root logger -> one stderr handler with the SafeFormatter (replacing others)."""
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(SafeFormatter())
    root.addHandler(handler)
    root.setLevel(level)
