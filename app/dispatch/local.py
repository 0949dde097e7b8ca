"""Local backend: N worker processes on this machine, one duplex pipe each.

The gateway keeps the queue: a job goes to an idle worker only, so it always
knows which job each worker holds. A reader thread per worker turns pipe
messages into calls on the event loop. When a worker dies (pipe EOF), the job it
held is answered 503 `worker_crashed` (it is not retried: the job may be what
killed it) and a new worker is started; the others are not touched.
A worker is recycled when its reply says it passed `max_requests` or the RSS
ceiling: a replacement is started first and the old worker keeps serving until
the replacement is warm, then it is stopped while idle, so no job is dropped.
Workers are started with the "spawn" method (no fork of a threaded gateway). A job
whose client hung up (or timed out) leaves the queue; one a worker holds is sent a
cancel and stops before its next sentence.
The queue is served earliest deadline first (by each job's `expires_at`, first come
first served among equals): a request with a short deadline is not left waiting behind
jobs that can wait, and no job waits past its own time for one due later.
On a cold numba cache a worker reports the decoders its warm-up helper is still
compiling (`compiling`, `worker/warm.py`): a job for one of them stays queued (within
its own time) until a worker has it warm, and jobs for warm decoders go past it, so a
request for a warm decoder never waits behind a compile (issue 61).
"""
from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import math
import multiprocessing as mp
import threading
import time
from typing import Any

from worker.config import WorkerConfig
from worker.cores import share_cores
from worker.local import run_local_worker

from .. import metrics
from ..errors import ServiceError
from .base import Dispatcher, with_warm

logger = logging.getLogger(__name__)


class _Handle:
    def __init__(self, slot: int, name: str) -> None:
        self.slot = slot
        self.name = name
        self.proc: Any = None
        self.conn: Any = None
        self.state = "starting"      # starting | idle | busy | stopping | dead
        self.ticket: tuple[dict, asyncio.Future] | None = None
        self.pid: int | None = None
        self.served = 0
        self.rss = 0
        self.started = time.monotonic()
        self.replacement: _Handle | None = None   # a warming worker that will take over
        self.retire = False
        self.fatal: str | None = None
        self.warm: dict[str, list[str]] | None = None   # model -> decoders compiled
        self.compiling: dict[str, list[str]] = {}       # model -> decoders on their way

    def takes(self, job: dict) -> bool:
        """Whether this worker can run `job` now (idle, and its decoder not compiling)."""
        return (self.state == "idle" and not self.retire
                and job.get("decoder") not in self.compiling.get(job.get("model"), ()))


class LocalDispatcher(Dispatcher):
    backend = "local"

    def __init__(self, n: int, cfg: WorkerConfig, log_level: int = logging.INFO) -> None:
        self.n = max(1, n)
        self.cfg = cfg
        self.log_level = log_level
        self.ctx = mp.get_context("spawn")
        self.handles: list[_Handle] = []
        self.pending: collections.deque[tuple[dict, asyncio.Future]] = collections.deque()
        self._catalogue: dict[str, dict] = {}
        self._names = itertools.count(1)
        self._crashes = 0
        self.error: str | None = None
        self.stopping = False
        self.loop: asyncio.AbstractEventLoop | None = None

    # ---- lifecycle -------------------------------------------------------------
    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        share_cores(self.n)
        for slot in range(self.n):
            self.handles.append(self._spawn(slot))

    async def stop(self) -> None:
        self.stopping = True
        everyone = self.handles + [h.replacement for h in self.handles if h.replacement]
        for h in everyone:
            self._send(h, {"type": "stop"})
        deadline = time.monotonic() + 10
        for h in everyone:
            await asyncio.to_thread(h.proc.join, max(0.1, deadline - time.monotonic()))
            if h.proc.is_alive():
                h.proc.kill()              # workers ignore SIGTERM (see worker.local)
                await asyncio.to_thread(h.proc.join, 5)
        for _job, fut in self.pending:
            if not fut.done():
                fut.set_exception(ServiceError("not_ready", "the service is stopping"))
        self.pending.clear()

    def _spawn(self, slot: int) -> _Handle:
        h = _Handle(slot, f"local-{next(self._names)}")
        parent, child = self.ctx.Pipe(duplex=True)
        h.proc = self.ctx.Process(target=run_local_worker, name=f"deptree-{h.name}",
                                  args=(child, self.cfg.to_dict(), h.name, self.log_level),
                                  daemon=True)
        h.proc.start()
        child.close()
        h.conn, h.pid = parent, h.proc.pid
        threading.Thread(target=self._reader, args=(h,), name=f"pipe-{h.name}",
                         daemon=True).start()
        logger.info("started worker %s (pid %d)", h.name, h.pid)
        return h

    def reload(self) -> int:
        """Replace every worker, the recycle way: the old one serves until its
        replacement is warm, so no request waits or fails."""
        n = 0
        for h in self.handles:
            if h.state in ("idle", "busy") and h.replacement is None and not h.retire:
                metrics.WORKER_RESTARTS.labels("reload").inc()
                h.replacement = self._spawn(h.slot)
                n += 1
        return n

    def _reader(self, h: _Handle) -> None:
        while True:
            try:
                msg = h.conn.recv()
            except (EOFError, OSError):
                self._call(self._on_exit, h)
                return
            self._call(self._on_message, h, msg)

    def _call(self, fn, *args) -> None:
        try:
            self.loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:      # loop closed at shutdown
            pass

    def _send(self, h: _Handle, msg: dict) -> bool:
        try:
            h.conn.send(msg)
            return True
        except (OSError, ValueError):
            return False

    # ---- events ----------------------------------------------------------------
    def _on_message(self, h: _Handle, msg: dict) -> None:
        kind = msg.get("type")
        if kind in ("hello", "warm"):
            h.warm = msg.get("warm")
            h.compiling = msg.get("compiling") or {}
        if kind == "warm":
            logger.info("worker %s: warm decoders %s", h.name, h.warm)
        elif kind == "hello":
            h.state = "idle"
            h.rss = msg["worker"]["rss_bytes"]
            self._catalogue = msg["catalogue"]
            self._crashes = 0
            self.error = None
            metrics.set_worker(h.name, True, h.rss, 0)
            logger.info("worker %s is ready (%.1fs; warm: %s)", h.name,
                        time.monotonic() - h.started, h.warm)
            old = next((o for o in self.handles if o.replacement is h), None)
            if old is not None:
                self.handles[self.handles.index(old)] = h
                old.retire = True
                if old.state == "idle":
                    self._retire(old)
            elif h not in self.handles:
                self.handles.append(h)
        elif kind == "fatal":
            h.fatal = msg.get("message", "worker failed to start")
            self.error = h.fatal
            logger.error("worker %s cannot start: %s", h.name, h.fatal)
        elif kind == "result":
            reply = msg["reply"]
            ticket, h.ticket = h.ticket, None
            h.served = reply.get("worker", {}).get("served", h.served + 1)
            h.rss = reply.get("worker", {}).get("rss_bytes", h.rss)
            metrics.set_worker(h.name, True, h.rss, h.served)
            if ticket is not None and not ticket[1].done():
                ticket[1].set_result(reply)
            h.state = "idle"
            if reply.get("recycle") and h.replacement is None and not h.retire \
                    and not self.stopping:
                logger.info("recycling worker %s (%s, %d jobs, RSS %.0f MB)", h.name,
                            reply["recycle"], h.served, h.rss / 2**20)
                metrics.WORKER_RESTARTS.labels("recycle").inc()
                h.replacement = self._spawn(h.slot)
            if h.retire:
                self._retire(h)
        self._pump()

    def _retire(self, h: _Handle) -> None:
        h.state = "stopping"
        self._send(h, {"type": "stop"})
        metrics.set_worker(h.name, False)

    def _on_exit(self, h: _Handle) -> None:
        prev = h.state
        h.state = "dead"
        metrics.set_worker(h.name, False)
        if h.ticket is not None and not h.ticket[1].done():
            h.ticket[1].set_exception(ServiceError(
                "worker_crashed", f"worker {h.name} died while parsing this request; it has"
                " been restarted, the request was not retried"))
        h.ticket = None
        owner = next((o for o in self.handles if o.replacement is h), None)
        if owner is not None:          # a warming replacement died: keep the old worker
            owner.replacement = None
            if not h.fatal:
                metrics.WORKER_RESTARTS.labels("crash").inc()
            return
        if self.stopping or prev == "stopping":
            if h in self.handles and h.retire:
                self.handles.remove(h)
            return
        if h.fatal:
            if h in self.handles:
                self.handles.remove(h)
            return
        # A crash: replace the worker in its slot (a warming replacement takes over).
        exitcode = h.proc.exitcode if h.proc is not None else None
        logger.error("worker %s (pid %s) died (exit code %s, state %s); restarting", h.name,
                     h.pid, exitcode, prev)
        metrics.WORKER_RESTARTS.labels("crash").inc()
        self._crashes += 1
        if h.replacement is not None:
            h.retire = True
            return                     # the replacement takes the slot when warm
        delay = 0.0 if prev != "starting" else min(30.0, 0.5 * 2 ** min(self._crashes, 6))
        new = self._spawn_later(h, delay)
        if h in self.handles and new is not None:
            self.handles[self.handles.index(h)] = new
        self._pump()

    def _spawn_later(self, h: _Handle, delay: float) -> _Handle | None:
        if delay <= 0:
            return self._spawn(h.slot)

        def later() -> None:
            if self.stopping:
                return
            new = self._spawn(h.slot)
            if h in self.handles:
                self.handles[self.handles.index(h)] = new
        self.loop.call_later(delay, later)
        return None

    # ---- scheduling ------------------------------------------------------------
    def _pump(self) -> None:
        while self.pending:
            taken = self._take()
            if taken is None:
                break
            h, (job, fut) = taken
            if fut.done():
                continue
            h.state, h.ticket = "busy", (job, fut)
            if not self._send(h, {"type": "job", "job": job}):
                h.ticket = None
                h.state = "dead"
                self.pending.appendleft((job, fut))
        metrics.QUEUE_DEPTH.set(len(self.pending))

    def _take(self) -> tuple[_Handle, tuple[dict, asyncio.Future]] | None:
        """Remove and return the queued job due first (the earliest `expires_at`; a job
        without one counts as due last; the earlier queued among equals) that an idle
        worker can take, with that worker; None when there is none."""
        idle = [w for w in self.handles if w.state == "idle" and not w.retire]
        if not idle:
            return None
        order = sorted(range(len(self.pending)), key=lambda i: (
            self.pending[i][0].get("expires_at") or math.inf, i))
        for i in order:
            item = self.pending[i]
            h = next((w for w in idle if w.takes(item[0])), None)
            if h is not None or item[1].done():
                del self.pending[i]
                return (h or idle[0]), item
        return None

    async def submit(self, job: dict[str, Any], timeout: float) -> dict[str, Any]:
        if not any(h.state in ("idle", "busy", "starting", "dead") for h in self.handles):
            raise ServiceError("no_workers", f"no worker is running: {self.error or 'stopped'}")
        fut = self.loop.create_future()
        self.pending.append((job, fut))
        self._pump()
        try:
            return await asyncio.wait_for(asyncio.shield(fut), timeout)
        except TimeoutError:
            self._withdraw(job, fut)
            raise ServiceError("timeout", f"no answer within {timeout:g} s",
                               limit="request_timeout_s", value=timeout) from None
        except asyncio.CancelledError:       # the client hung up (or the gateway stops)
            self._withdraw(job, fut)
            raise

    def _withdraw(self, job: dict, fut: asyncio.Future) -> None:
        """Nobody waits for this job any more: a queued job is dropped; the worker
        holding one is told to stop it between sentences (its reply is ignored)."""
        try:
            self.pending.remove((job, fut))
        except ValueError:
            pass
        for h in self.handles + [h.replacement for h in self.handles if h.replacement]:
            if h.ticket is not None and h.ticket[0] is job:
                self._send(h, {"type": "cancel", "id": job["id"]})
        if not fut.done():
            fut.cancel()
        metrics.QUEUE_DEPTH.set(len(self.pending))

    # ---- reporting -------------------------------------------------------------
    def catalogue(self) -> dict[str, dict[str, Any]]:
        return with_warm(self._catalogue, [h.warm for h in self.handles
                                           if h.state in ("idle", "busy")])

    def status(self) -> dict[str, Any]:
        up = [h for h in self.handles if h.state in ("idle", "busy")]
        metrics.WORKERS_UP.set(len(up))
        return {
            "backend": self.backend, "workers_up": len(up), "workers_wanted": self.n,
            "queue_depth": len(self.pending),
            "in_flight": sum(1 for h in self.handles if h.state == "busy"),
            "error": self.error,
            "workers": [{"name": h.name, "pid": h.pid, "state": h.state, "served": h.served,
                         "rss_bytes": h.rss, "busy": h.ticket[0]["id"] if h.ticket else None}
                        for h in self.handles],
        }
