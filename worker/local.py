"""A worker process of the local backend: one duplex pipe to the gateway.

Messages in: {"type": "job", "job": {...}}, {"type": "cancel", "id": job id} (its
client has gone: the job stops before its next sentence; a cancel for a job already
answered is ignored) or {"type": "stop"}.
Messages out: {"type": "hello", "catalogue", "worker", "warm", "compiling"} once models
are loaded and warmed (`warm`: model -> its decoders already compiled; on a cold numba
cache the others follow, `worker/warm.py`, and `compiling` lists those the helper is
still compiling, which the gateway sends this worker no job for); {"type": "warm",
"warm", "compiling"} as more become warm, and once the helper is done;
{"type": "result", "reply"} per job; {"type": "fatal", "message"} if the models cannot
be loaded (the gateway then stops restarting workers).
The worker ignores SIGINT and SIGTERM (a Ctrl-C or a service manager signals the whole
process group; the gateway, draining its requests, stops its workers itself) and exits
when the pipe closes.
"""
from __future__ import annotations

import logging
import signal
import threading
import time
from multiprocessing.connection import Connection

from .config import WorkerConfig
from .logsafe import configure_logging

logger = logging.getLogger(__name__)


def run_local_worker(conn: Connection, cfg: dict, name: str, log_level: int = logging.INFO) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    configure_logging(log_level)
    from .engine import Engine  # here: the gateway imports this module, never a kernel

    engine = Engine(WorkerConfig.from_dict(cfg), name=name)
    sending = threading.Lock()   # the warm-up thread sends too

    def send(msg: dict) -> None:
        with sending:
            conn.send(msg)

    def tell_warm() -> None:
        try:
            send({"type": "warm", "warm": engine.warm_decoders(),
                  "compiling": engine.compiling()})
        except (BrokenPipeError, OSError):
            pass

    engine.on_warm = tell_warm
    try:
        engine.load()
        if engine.cfg.warm_up:
            engine.warm_up()
    except Exception as exc:  # reported to the gateway, then exit
        logger.exception("cannot start worker %s", name)
        engine.close()
        conn.send({"type": "fatal", "message": f"{type(exc).__name__}: {exc}"})
        conn.close()
        return
    send({"type": "hello", "catalogue": engine.catalogue(), "worker": engine.info(),
          "warm": engine.warm_decoders(), "compiling": engine.compiling()})
    logger.info("worker %s ready: %s (%.1f s after start, %.1f s of CPU; warm: %s)", name,
                ", ".join(sorted(engine.pipes)), time.time() - engine.started,
                time.process_time(), engine.warm_decoders())
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
                send({"type": "result", "reply": reply})
            except (BrokenPipeError, OSError):
                break
    engine.close()
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
