"""Say in the log when numba compiles, and how far a cold start has got.

numba compiles a kernel on its first call (or, for kernels with an explicit signature,
when their module is imported) unless its on-disk cache has it; on a fresh install that
is a minute or more of silence. Importing this module (the packages that hold kernels,
`graph`, `text` and `transition`, do) registers once per process a listener on numba's
"numba:compile" events, which fire for real compiles only, never for kernels loaded
from the cache. It logs at INFO the first compile of the
process (and why it happens), then a progress line at most every `PROGRESS_EVERY_S`
seconds of compiling, and each outermost kernel at DEBUG. `totals()` gives the count
and seconds so far, for callers that report a unit of work (`models/serve/warmup.py`).
"""
from __future__ import annotations

import logging
import threading
import time

from numba.core import event

logger = logging.getLogger(__name__)

PROGRESS_EVERY_S = 5.0


def _name(ev: event.Event) -> str:
    disp = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
    fn = getattr(disp, "py_func", None)
    if fn is None:
        return "?"
    return f"{fn.__module__}.{fn.__qualname__}"


class CompileLog(event.Listener):
    """Counts and logs compiles; outermost ones are timed (the nested ones are the
    callees numba compiles while typing their caller)."""

    def __init__(self) -> None:
        self.count = 0            # kernels compiled (nested ones included)
        self.seconds = 0.0        # time in outermost compiles
        self._local = threading.local()
        self._last_report = 0.0

    def on_start(self, ev: event.Event) -> None:
        stack = self._stack()
        stack.append(time.perf_counter())
        if self.count == 0 and len(stack) == 1:
            logger.info("numba is compiling kernels (first start after an install, an upgrade "
                        "or an edit of kernel sources; they are cached on disk for later "
                        "starts): %s", _name(ev))
            self._last_report = time.monotonic()

    def on_end(self, ev: event.Event) -> None:
        stack = self._stack()
        t0 = stack.pop() if stack else time.perf_counter()
        self.count += 1
        if stack:
            return
        took = time.perf_counter() - t0
        self.seconds += took
        logger.debug("numba compiled %s in %.1f s", _name(ev), took)
        now = time.monotonic()
        if now - self._last_report >= PROGRESS_EVERY_S:
            self._last_report = now
            logger.info("numba: %d kernels compiled, %.0f s so far (last: %s)", self.count,
                        self.seconds, _name(ev))

    def _stack(self) -> list[float]:
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack


_LOG: CompileLog | None = None


def install() -> CompileLog:
    """Register the process's compile log once; return it."""
    global _LOG
    if _LOG is None:
        _LOG = CompileLog()
        event.register("numba:compile", _LOG)
    return _LOG


def totals() -> tuple[int, float]:
    """(kernels compiled, seconds spent compiling) in this process so far."""
    log = install()
    return log.count, log.seconds


install()
