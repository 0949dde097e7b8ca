"""Redis backend: jobs go onto a Redis Stream, any number of workers consume them.

The gateway XADDs each job and waits (BLPOP) on the job's reply key; workers
(`deptree worker --redis-url ...` anywhere, plus `workers` local processes the
gateway starts and restarts itself) read with a consumer group, reply, then
acknowledge, and reclaim the pending entries of dead workers with XAUTOCLAIM (see
`worker.stream`). A monitor task reads the worker heartbeats, the model catalogue
the workers published and the group's backlog once a second for /ready, /models
and the queue-depth gauge.

Faults: a Redis outage shorter than OUTAGE_GRACE_S (a restart) is ridden out by
sending the job again, longer it is a 503; a request whose own wait (its deadline plus
the grace, or request_timeout_s) ends during the outage gets the timeout it would get
for a late answer (504 `deadline_exceeded`), not a 503; a job whose client hung up, or that
the gateway stopped waiting for, is deleted from the stream and marked cancelled
(the worker holding it stops before its next sentence). The reply is awaited in
short BLPOPs: redis-py 8 reads with a 5 s socket timeout by default, which ended
longer waits with a 503.
"""
from __future__ import annotations

import asyncio
import json
import logging
import multiprocessing as mp
import time
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from worker.config import WorkerConfig
from worker.cores import share_cores
from worker.stream import EXIT_FATAL, GROUP, keys, run_stream_worker

from .. import metrics
from ..errors import ServiceError
from .base import Dispatcher, with_warm

logger = logging.getLogger(__name__)

OUTAGE_GRACE_S = 5.0      # how long a request waits for Redis (or its workers) to come back
BLPOP_SLICE_S = 1.0       # one BLPOP's wait; the client's socket timeout is longer


class _NoWorkers(Exception):
    pass


# what a restarting or unreachable Redis raises, and a moment with no live worker
_TRANSIENT = (_NoWorkers, RedisConnectionError, RedisTimeoutError, OSError)


class RedisDispatcher(Dispatcher):
    backend = "redis"

    def __init__(self, url: str, prefix: str, n_local: int, cfg: WorkerConfig,
                 claim_idle_ms: int = 5000, max_deliveries: int = 3,
                 log_level: int = logging.INFO) -> None:
        self.url = url
        self.k = keys(prefix)
        self.prefix = prefix
        self.n_local = n_local
        self.cfg = cfg
        self.claim_idle_ms = claim_idle_ms
        self.max_deliveries = max_deliveries
        self.log_level = log_level
        self.ctx = mp.get_context("spawn")
        self.procs: list[Any] = []
        self.client: aioredis.Redis | None = None
        self._catalogue: dict[str, dict] = {}
        self._workers: list[dict] = []
        self._depth = 0
        self._in_flight = 0
        self.error: str | None = None
        self._task: asyncio.Task | None = None
        self._workers_seen = float("-inf")      # monotonic time workers were last seen
        self._ignored: set[tuple[str, str]] = set()   # malformed values already logged
        self.stopping = False

    async def start(self) -> None:
        self.client = aioredis.Redis.from_url(self.url, decode_responses=True,
                                              socket_connect_timeout=2, socket_timeout=5)
        try:
            await self.client.xgroup_create(self.k["stream"], GROUP, id="0", mkstream=True)
        except RedisError as exc:
            if "BUSYGROUP" not in str(exc):
                self.error = f"redis: {exc}"
                logger.error("cannot create the job stream: %s", exc)
        await self._check_policy()
        if self.n_local:
            share_cores(self.n_local)
        self.procs = [self._spawn() for _ in range(self.n_local)]
        self._task = asyncio.create_task(self._monitor())

    async def _check_policy(self) -> None:
        """Warn when a full Redis would hurt the queue: allkeys-* may evict the stream,
        noeviction refuses new jobs (503); volatile-* evicts only expiring (cache) keys."""
        try:
            conf = await self.client.config_get("maxmemory*")
        except RedisError:            # managed Redis may forbid CONFIG
            return
        policy = conf.get("maxmemory-policy", "")
        if int(conf.get("maxmemory") or 0) and not policy.startswith("volatile"):
            logger.warning("Redis maxmemory-policy %s with maxmemory set: when Redis is full "
                           "the job stream %s; use a volatile-* policy", policy,
                           "refuses jobs" if policy == "noeviction" else "may be evicted")

    async def stop(self) -> None:
        self.stopping = True
        if self._task:
            self._task.cancel()
        for p in self.procs:
            if p.is_alive():
                p.terminate()          # SIGTERM: the worker finishes its job, then exits
        for p in self.procs:
            await asyncio.to_thread(p.join, 15)
            if p.is_alive():
                p.kill()
        if self.client is not None:
            await self.client.aclose()

    def _spawn(self):
        p = self.ctx.Process(target=run_stream_worker, daemon=True,
                             args=(self.cfg.to_dict(), self.url, self.prefix, None,
                                   self.claim_idle_ms, self.max_deliveries, self.log_level))
        p.start()
        logger.info("started stream worker pid %d", p.pid)
        return p

    async def _monitor(self) -> None:
        while not self.stopping:
            for i, p in enumerate(self.procs):
                if not p.is_alive() and p.exitcode != EXIT_FATAL:
                    reason = "recycle" if p.exitcode == 3 else "crash"
                    logger.warning("stream worker pid %d exited (%s); restarting", p.pid,
                                   p.exitcode)
                    metrics.WORKER_RESTARTS.labels(reason).inc()
                    self.procs[i] = self._spawn()
                elif not p.is_alive():
                    self.error = "a local stream worker cannot load its models (see its log)"
            try:
                await self._refresh()
            except (RedisError, OSError) as exc:
                self.error = f"redis: {exc}"
                self._workers = []
            except Exception:         # a bug must not stop the monitor: /ready would go stale
                logger.exception("the worker monitor failed; it goes on")
            await asyncio.sleep(1.0)

    async def _refresh(self) -> None:
        c = self.client
        names = sorted(await c.smembers(self.k["workers"]))
        infos = await c.mget([self.k["worker"] + n for n in names]) if names else []
        workers = []
        for n, raw in zip(names, infos):
            if raw is None:
                await c.srem(self.k["workers"], n)
                metrics.set_worker(n, False)
                continue
            info = self._object(raw, f"heartbeat of worker {n!r}")
            if info is None:
                continue
            info["name"] = n
            workers.append(info)
            metrics.set_worker(n, True, info.get("rss_bytes"), info.get("served"))
        self._workers = workers
        if workers:
            self._workers_seen = time.monotonic()
        models = await c.hgetall(self.k["models"])
        if models or not workers:   # after a Redis restart the workers publish them again
            cat = {name: self._object(v, f"catalogue entry {name!r}")
                   for name, v in models.items()}
            self._catalogue = {name: info for name, info in cat.items()
                               if info is not None and isinstance(info.get("decoders"), dict)}
        depth = 0
        try:
            groups = await c.xinfo_groups(self.k["stream"])
        except ResponseError:       # no stream yet (a Redis that has just restarted)
            groups = []
        for g in groups:
            if g.get("name") == GROUP:
                depth = int(g.get("lag") or 0) + int(g.get("pending") or 0)
        self._depth = depth
        metrics.QUEUE_DEPTH.set(depth)
        metrics.WORKERS_UP.set(len(workers))
        if not any(not p.is_alive() and p.exitcode == EXIT_FATAL for p in self.procs):
            self.error = None

    def _object(self, raw: str, what: str) -> dict | None:
        """A JSON object read from Redis, or None (logged once per value) if it is none:
        whatever another client wrote there, the monitor goes on."""
        try:
            value = json.loads(raw)
        except (TypeError, ValueError):
            value = None
        if isinstance(value, dict):
            return value
        if (what, raw) not in self._ignored:
            if len(self._ignored) > 1000:
                self._ignored.clear()
            self._ignored.add((what, raw))
            logger.warning("ignoring the %s: not a JSON object: %.200r", what, raw)
        return None

    async def submit(self, job: dict[str, Any], timeout: float) -> dict[str, Any]:
        """XADD the job and wait for its reply. A short Redis outage (a restart, a network
        blip) or a moment with no worker after workers were seen is ridden out for up to
        OUTAGE_GRACE_S by sending the job again; longer, it is a 503."""
        end = time.monotonic() + timeout
        key = self.k["reply"] + job["id"]
        trouble_since: float | None = None
        self._in_flight += 1
        try:
            while True:
                try:
                    if not self._workers:
                        raise _NoWorkers()
                    res = await self._send_and_wait(job, key, end)
                    break
                except (_NoWorkers, RedisError, OSError) as exc:
                    if not isinstance(exc, _TRANSIENT):       # e.g. OOM: no use waiting
                        raise ServiceError("dispatch_unavailable",
                                           f"the job queue refused the job: {exc}") from None
                    now = time.monotonic()
                    trouble_since = trouble_since or now
                    recent = now - self._workers_seen <= OUTAGE_GRACE_S
                    if isinstance(exc, _NoWorkers) and not recent:
                        raise ServiceError("no_workers", "no worker is consuming the job stream"
                                           + (f" ({self.error})" if self.error else "")) from None
                    if now >= end and not self.stopping:
                        # the request's own wait ended first: a timeout (504 at the
                        # deadline), as when the answer is late, not a 503 for Redis
                        raise ServiceError("timeout", f"no answer within {timeout:g} s (the"
                                           f" job queue was unavailable: {exc or 'no worker'})",
                                           limit="request_timeout_s", value=timeout) from None
                    if self.stopping or now - trouble_since >= OUTAGE_GRACE_S:
                        if isinstance(exc, _NoWorkers):
                            raise ServiceError("no_workers", "no worker came back within"
                                               f" {OUTAGE_GRACE_S:g} s"
                                               + (f" ({self.error})" if self.error else "")
                                               ) from None
                        raise ServiceError("dispatch_unavailable",
                                           f"the job queue is unavailable: {exc}") from None
                    logger.info("job %s: %s; sending it again shortly", job["id"],
                                type(exc).__name__)
                    await asyncio.sleep(max(0.0, min(0.25, end - now)))
        finally:
            self._in_flight -= 1
        if res is None:
            raise ServiceError("timeout", f"no answer within {timeout:g} s",
                               limit="request_timeout_s", value=timeout)
        reply = self._object(res[1], f"reply to job {job['id']}")
        if reply is None:
            raise ServiceError("dispatch_unavailable", "the reply to the job is unreadable")
        return reply

    async def _send_and_wait(self, job: dict[str, Any], key: str, end: float):
        """XADD, then BLPOP the reply in slices (each shorter than the socket timeout, so a
        long wait is not a read timeout and a lost connection is seen within a slice)."""
        entry = await self.client.xadd(self.k["stream"], {"job": json.dumps(job)})
        try:
            while (left := end - time.monotonic()) > 0:
                res = await self.client.blpop([key], timeout=max(0.01, min(left, BLPOP_SLICE_S)))
                if res is not None:
                    return res
        except asyncio.CancelledError:       # the client hung up: no worker should start it
            await self._withdraw(entry, job["id"])
            raise
        await self._withdraw(entry, job["id"])        # timed out: nobody waits any more
        return None

    async def _withdraw(self, entry: str, job_id: str) -> None:
        """Delete a job nobody waits for and mark it cancelled: a worker already
        holding it stops before its next sentence."""
        try:
            pipe = self.client.pipeline(transaction=False)
            pipe.xdel(self.k["stream"], entry)
            pipe.set(self.k["cancel"] + job_id, 1, ex=60)
            await pipe.execute()
        except (RedisError, OSError) as exc:
            logger.debug("cannot withdraw job %s: %s", entry, exc)

    def catalogue(self) -> dict[str, dict[str, Any]]:
        return with_warm(self._catalogue, [w.get("warm") for w in self._workers])

    def status(self) -> dict[str, Any]:
        return {"backend": self.backend, "workers_up": len(self._workers),
                "workers_local": self.n_local, "queue_depth": self._depth,
                "in_flight": self._in_flight, "error": self.error, "workers": self._workers}
