"""A worker of the redis backend: consumes jobs from a Redis Stream consumer group.

Keys, under a prefix P (default "deptree"):
  P:jobs            the stream; each entry {"job": json}; group "workers"
  P:reply:<job id>  list the reply is pushed to (expires after a minute)
  P:workers         set of live worker names; P:worker:<name> their heartbeat
                    (pid, host, served, rss, busy entry, warm decoders of each model),
                    expiring after a few seconds
  P:models          hash model name -> catalogue entry (versions, decoders, labels)
  P:dead            dead letters: stream entries that are no job (not JSON, not an
                    object, no id), with the reason; the last DEAD_LETTERS are kept
  P:cancel:<job id> set by the gateway when a job's client has gone or it stopped
                    waiting: the worker holding the job stops before its next sentence

A job is acknowledged (XACK + XDEL) only after its reply is pushed, so a worker
that dies while holding one leaves it pending; the others take it over with
XAUTOCLAIM once it has been idle `claim_idle_ms`. A live worker keeps its own
entry fresh (XCLAIM JUSTID) while it decodes, so long jobs are not stolen. A job
delivered more than `max_deliveries` times is answered with a "crashed" error
instead of being tried again (a request that kills every worker). An entry that is
no job is acknowledged, deleted and dead-lettered, logged once: whatever is in the
stream, no entry can stop a worker (or, redelivered, every worker in turn).

On SIGTERM a worker takes no new job and ends the one it holds, its heartbeat still
claiming it (so no other worker decodes it again), then leaves the worker set.
After a Redis error it creates the group and publishes its models again (a Redis
restarted empty has neither).

`run_supervised` is `deptree worker`: it keeps N such processes alive, starting a
new one when one exits to be recycled or crashes, and stops on SIGTERM/SIGINT.
"""
from __future__ import annotations

import json
import logging
import multiprocessing as mp
import multiprocessing.connection
import os
import signal
import socket
import sys
import threading
import time

import redis

from .config import WorkerConfig
from .cores import share_cores
from .logsafe import configure_logging

logger = logging.getLogger(__name__)

GROUP = "workers"
EXIT_STOP, EXIT_FATAL, EXIT_RECYCLE = 0, 2, 3
DEAD_LETTERS = 1000          # P:dead keeps about this many entries (XADD MAXLEN ~)


def keys(prefix: str) -> dict[str, str]:
    return {"stream": f"{prefix}:jobs", "workers": f"{prefix}:workers",
            "models": f"{prefix}:models", "worker": f"{prefix}:worker:",
            "reply": f"{prefix}:reply:", "dead": f"{prefix}:dead",
            "cancel": f"{prefix}:cancel:"}


def job_of(fields: dict | None) -> dict | str:
    """The job of a stream entry, or why the entry is none (a reason to dead-letter)."""
    raw = (fields or {}).get("job")
    if raw is None:
        return "no 'job' field"
    try:
        job = json.loads(raw)
    except (TypeError, ValueError) as exc:
        return f"'job' is not JSON ({exc})"
    if not isinstance(job, dict):
        return f"'job' is JSON {type(job).__name__}, not an object"
    if not isinstance(job.get("id"), str) or not job["id"]:
        return "the job has no string 'id'"
    return job


def ensure_group(r: redis.Redis, stream: str) -> None:
    try:
        r.xgroup_create(stream, GROUP, id="0", mkstream=True)
    except redis.ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise


class StreamWorker:
    def __init__(self, cfg: WorkerConfig, redis_url: str, prefix: str = "deptree",
                 name: str | None = None, claim_idle_ms: int = 5000, max_deliveries: int = 3,
                 block_ms: int = 1000, heartbeat_s: float | None = None) -> None:
        from .engine import Engine  # here: the gateway imports this module, never a kernel

        self.name = name or f"{socket.gethostname()}:{os.getpid()}"
        self.engine = Engine(cfg, name=self.name)
        self.url = redis_url
        self.k = keys(prefix)
        self.claim_idle_ms = claim_idle_ms
        self.max_deliveries = max_deliveries
        self.block_ms = block_ms
        # several heartbeats per claim interval, so a live worker's entry never looks idle
        self.heartbeat_s = heartbeat_s or min(1.0, claim_idle_ms / 4000)
        self.current: str | None = None
        self.stop = threading.Event()    # stop taking jobs (SIGTERM): the current one ends
        self.done = threading.Event()    # run() has ended: the heartbeat stops too

    def _client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, decode_responses=True, socket_connect_timeout=2,
                                    socket_timeout=self.block_ms / 1000 + 5)

    # ---- main loop -------------------------------------------------------------
    def run(self) -> int:
        try:
            self.engine.load()
            if self.engine.cfg.warm_up:
                self.engine.warm_up()
        except Exception:  # a worker that cannot load its models stops
            logger.exception("cannot start worker %s", self.name)
            self.engine.close()
            return EXIT_FATAL
        r = self._client()
        hb = threading.Thread(target=self._heartbeat, name="heartbeat", daemon=True)
        published = False
        last_claim = 0.0
        code = EXIT_STOP
        while not self.stop.is_set():
            try:
                if not published:       # at start, and after an error: Redis may have
                    ensure_group(r, self.k["stream"])       # restarted empty
                    for name, info in self.engine.catalogue().items():
                        r.hset(self.k["models"], name, json.dumps(info))
                    published = True
                    if not hb.is_alive():
                        hb.start()
                        logger.info("worker %s consuming %s", self.name, self.k["stream"])
                entries: list = []
                if time.monotonic() - last_claim > self.claim_idle_ms / 2000:
                    last_claim = time.monotonic()
                    entries = self._reclaim(r)
                if not entries:
                    resp = r.xreadgroup(GROUP, self.name, {self.k["stream"]: ">"}, count=1,
                                        block=self.block_ms)
                    entries = resp[0][1] if resp else []
                for entry_id, fields in entries:
                    try:
                        self._handle(r, entry_id, fields)
                    except redis.RedisError:
                        raise
                    except Exception as exc:  # a bug, or an entry nobody foresaw: never fatal
                        logger.exception("worker %s: entry %s failed", self.name, entry_id)
                        self._dead_letter(r, entry_id, fields, f"{type(exc).__name__}: {exc}")
            except redis.RedisError as exc:
                logger.warning("worker %s: redis error (%s); retrying in 1s", self.name, exc)
                published = False
                self.stop.wait(1.0)
                continue
            reason = self.engine.should_recycle()
            if reason:
                logger.info("worker %s recycles (%s) after %d jobs", self.name, reason,
                            self.engine.served)
                code = EXIT_RECYCLE
                break
        self.stop.set()
        self.done.set()
        if hb.is_alive():
            hb.join(5)
        try:
            r.srem(self.k["workers"], self.name)
            r.delete(self.k["worker"] + self.name)
        except redis.RedisError:
            pass
        self.engine.close()
        return code

    def _reclaim(self, r: redis.Redis) -> list:
        """Entries of dead consumers idle for claim_idle_ms; poison jobs answered here."""
        res = r.xautoclaim(self.k["stream"], GROUP, self.name, self.claim_idle_ms,
                           start_id="0-0", count=4)
        out = []
        for entry_id, fields in res[1]:
            if not fields:
                r.xack(self.k["stream"], GROUP, entry_id)
                continue
            pend = r.xpending_range(self.k["stream"], GROUP, min=entry_id, max=entry_id, count=1)
            times = pend[0]["times_delivered"] if pend else 1
            logger.warning("worker %s reclaimed %s (delivery %d)", self.name, entry_id, times)
            job = job_of(fields)
            if isinstance(job, str):
                self._dead_letter(r, entry_id, fields, job)
                continue
            if times > self.max_deliveries:
                reply = {"id": job["id"], "ok": False, "worker": self.engine.info(),
                         "error": {"kind": "crashed", "code": "worker_crashed",
                                   "message": f"the job was tried {times - 1} times and every"
                                              " worker holding it died"}}
                self._reply(r, entry_id, job, reply)
                continue
            out.append((entry_id, fields))
        return out

    def _handle(self, r: redis.Redis, entry_id: str, fields: dict) -> None:
        job = job_of(fields)
        if isinstance(job, str):
            self._dead_letter(r, entry_id, fields, job)
            return
        self.current = entry_id
        try:
            reply = self.engine.run(job, cancelled=self._cancel_check(r, job["id"]))
        finally:
            self.current = None
        self._reply(r, entry_id, job, reply)

    def _cancel_check(self, r: redis.Redis, job_id: str, every_s: float = 0.2):
        """`cancelled` for Engine.run: whether P:cancel:<job id> exists, asked of Redis
        at most every `every_s` (a Redis error counts as "not cancelled")."""
        key = self.k["cancel"] + job_id
        last = [float("-inf"), False]

        def cancelled() -> bool:
            if not last[1] and time.monotonic() - last[0] >= every_s:
                last[0] = time.monotonic()
                try:
                    last[1] = bool(r.exists(key))
                except redis.RedisError:
                    pass
            return last[1]
        return cancelled

    def _dead_letter(self, r: redis.Redis, entry_id: str, fields, reason: str) -> None:
        """Acknowledge and delete an entry that is no job, keeping it (cut to 2,000
        characters) and the reason in P:dead; logged once, as it is never redelivered."""
        logger.error("worker %s: stream entry %s is no job (%s); dead-lettered as %s",
                     self.name, entry_id, reason, self.k["dead"])
        try:
            kept = json.dumps(fields, ensure_ascii=False, default=repr)[:2000]
        except (TypeError, ValueError):
            kept = repr(fields)[:2000]
        pipe = r.pipeline()
        pipe.xadd(self.k["dead"], {"entry": entry_id, "reason": reason[:500], "fields": kept,
                                   "worker": self.name}, maxlen=DEAD_LETTERS, approximate=True)
        pipe.xack(self.k["stream"], GROUP, entry_id)
        pipe.xdel(self.k["stream"], entry_id)
        pipe.execute()

    def _reply(self, r: redis.Redis, entry_id: str, job: dict, reply: dict) -> None:
        key = self.k["reply"] + str(job.get("id"))
        pipe = r.pipeline()
        pipe.rpush(key, json.dumps(reply))
        pipe.expire(key, 60)
        pipe.xack(self.k["stream"], GROUP, entry_id)
        pipe.xdel(self.k["stream"], entry_id)
        pipe.execute()

    def _heartbeat(self) -> None:
        r = redis.Redis.from_url(self.url, decode_responses=True, socket_connect_timeout=1,
                                 socket_timeout=2)
        ttl = max(3, int(4 * self.heartbeat_s))
        while not self.done.is_set():    # beats on while a stopping worker ends its job
            try:
                info = self.engine.info()
                info.update(host=socket.gethostname(), busy=self.current,
                            models=sorted(self.engine.pipes),
                            warm=self.engine.warm_decoders())
                pipe = r.pipeline()
                pipe.set(self.k["worker"] + self.name, json.dumps(info), ex=ttl)
                pipe.sadd(self.k["workers"], self.name)
                if self.current:
                    pipe.xclaim(self.k["stream"], GROUP, self.name, 0, [self.current],
                                justid=True)
                pipe.execute()
            except redis.RedisError as exc:
                logger.debug("heartbeat failed: %s", exc)
            self.done.wait(self.heartbeat_s)


# ---- processes -------------------------------------------------------------------
def run_stream_worker(cfg: dict, redis_url: str, prefix: str, name: str | None = None,
                      claim_idle_ms: int = 5000, max_deliveries: int = 3,
                      log_level: int = logging.INFO) -> None:
    """Process entry: run one StreamWorker until stopped; exit code says why it ended.
    It also stops (as on SIGTERM) when the process that started it dies, even by
    SIGKILL: an orphan would go on taking jobs beside the replacement a supervisor
    starts."""
    configure_logging(log_level)
    w = StreamWorker(WorkerConfig.from_dict(cfg), redis_url, prefix, name=name,
                     claim_idle_ms=claim_idle_ms, max_deliveries=max_deliveries)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: w.stop.set())
    parent = mp.parent_process()
    if parent is not None:
        threading.Thread(target=_stop_with_parent, args=(parent, w.stop), name="parent-watch",
                         daemon=True).start()
    sys.exit(w.run())


def _stop_with_parent(parent, stop: threading.Event) -> None:
    """Set `stop` once `parent` has exited: its sentinel (the spawn pipe, whose other
    end only the parent holds) reads EOF then, however the parent died."""
    mp.connection.wait([parent.sentinel])
    if not stop.is_set():
        logger.warning("the parent process %s exited; this worker stops", parent.pid)
        stop.set()


def run_supervised(cfg: WorkerConfig, redis_url: str, prefix: str = "deptree",
                   processes: int = 1, claim_idle_ms: int = 5000, max_deliveries: int = 3) -> int:
    """Keep `processes` stream workers alive until SIGTERM/SIGINT (`deptree worker`)."""
    share_cores(processes)
    ctx = mp.get_context("spawn")
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    args = (cfg.to_dict(), redis_url, prefix, None, claim_idle_ms, max_deliveries,
            logging.getLogger().level or logging.INFO)
    procs: list = [None] * processes
    born = [0.0] * processes
    failures = [0] * processes
    code = 0
    while not stopping.is_set():
        for i, p in enumerate(procs):
            if p is not None and p.is_alive():
                continue
            if p is not None:
                if p.exitcode == EXIT_FATAL:
                    logger.error("worker %d cannot start (see above); stopping", i)
                    stopping.set()
                    code = EXIT_FATAL
                    break
                # back off only when crashes follow each other (a poison job, no memory)
                lived = time.monotonic() - born[i]
                failures[i] = 0 if p.exitcode == EXIT_RECYCLE or lived > 60 else failures[i] + 1
                logger.warning("worker process %d exited with %s; starting another", p.pid,
                               p.exitcode)
                if failures[i] and stopping.wait(min(30.0, 0.5 * 2 ** failures[i])):
                    break
            procs[i] = ctx.Process(target=run_stream_worker, args=args, daemon=False)
            procs[i].start()
            born[i] = time.monotonic()
        stopping.wait(0.5)
    for p in procs:
        if p is not None and p.is_alive():
            p.terminate()
    for p in procs:
        if p is not None:
            p.join(timeout=30)
    return code
