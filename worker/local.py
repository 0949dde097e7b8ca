"""A worker process of the local backend: one duplex pipe to the gateway.

Messages in: {"type": "job", "job": {...}}, {"type": "cancel", "id": job id} (its
client has gone: the job stops before its next sentence; a cancel for a job already
answered is ignored) or {"type": "stop"}.
Messages out: {"type": "hello", "catalogue", "worker"} once models are loaded and
warmed; {"type": "result", "reply"} per job; {"type": "fatal", "message"} if the
models cannot be loaded (the gateway then stops restarting workers).
The worker ignores SIGINT and SIGTERM (a Ctrl-C or a service manager signals the whole
process group; the gateway, draining its requests, stops its workers itself) and exits
when the pipe closes.
"""
from __future__ import annotations

import logging
import signal
from multiprocessing.connection import Connection

from .config import WorkerConfig
from .engine import Engine
from .logsafe import configure_logging

logger = logging.getLogger(__name__)


def run_local_worker(conn: Connection, cfg: dict, name: str, log_level: int = logging.INFO) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    configure_logging(log_level)
    engine = Engine(WorkerConfig.from_dict(cfg), name=name)
    try:
        engine.load()
        if engine.cfg.warm_up:
            engine.warm_up()
    except Exception as exc:  # reported to the gateway, then exit
        logger.exception("cannot start worker %s", name)
        conn.send({"type": "fatal", "message": f"{type(exc).__name__}: {exc}"})
        conn.close()
        return
    conn.send({"type": "hello", "catalogue": engine.catalogue(), "worker": engine.info()})
    logger.info("worker %s ready: %s", name, ", ".join(sorted(engine.pipes)))
    inbox = _Inbox(conn)
    while not inbox.stop:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            break
        if msg.get("type") == "stop":
            break
        if msg.get("type") == "job":
            job = msg["job"]
            job_id = job.get("id") if isinstance(job, dict) else None
            reply = engine.run(job, cancelled=lambda i=job_id: inbox.cancelled(i))
            reply["recycle"] = engine.should_recycle()
            try:
                conn.send({"type": "result", "reply": reply})
            except (BrokenPipeError, OSError):
                break
    logger.info("worker %s exits after %d jobs", name, engine.served)


class _Inbox:
    """What arrived on the pipe while a job ran, read between its sentences: a cancel
    of that job, or a stop (or a closed pipe) to act on once it is answered."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.stop = False

    def cancelled(self, job_id: str | None) -> bool:
        gone = False
        try:
            while not self.stop and self.conn.poll():
                msg = self.conn.recv()
                if msg.get("type") == "cancel" and msg.get("id") == job_id:
                    gone = True
                elif msg.get("type") == "stop":
                    self.stop = True
        except (EOFError, OSError):          # the gateway is gone: nobody waits
            self.stop = gone = True
        return gone
