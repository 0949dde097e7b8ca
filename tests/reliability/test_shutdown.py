"""Graceful shutdown, bounded in time. SIGTERM to the gateway (local backend) while it
holds N requests: each gets its complete answer, new connections are refused, the
gateway and its workers exit. SIGTERM to a `deptree worker` (redis backend) while jobs
are in flight: it finishes the job it holds (nobody else decodes it again), the other
worker takes the rest, every client gets its answer.

On a busy machine (issue 61) the load's requests cost less search (`load_driver.busy`,
calibrated by the slowdown measured before: 1.0 on a quiet machine), so that the drain
and the deadlines mean the same as on a quiet one."""
from __future__ import annotations

import os
import signal
import time

import httpx
import pytest
from load_calibration import slowdown
from load_driver import Load, batches, caps, check_answered
from procs import alive, parent

TIMEOUT_S = 30


def refused(url: str, timeout: float) -> bool:
    """True once a new connection to `url` is refused (polled up to `timeout` s)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        try:
            httpx.get(url + "/health", timeout=1)
        except httpx.ConnectError:
            return True
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("who", ["gateway", "process group"])
def test_sigterm_gateway_drains_accepted_requests(serve, who):
    """`process group`: the workers get the SIGTERM too, as from systemd or a Ctrl-\\ of
    the whole group; they must leave the stopping to the gateway."""
    n = 12
    # 12 requests queued at once: on a busy machine the last waits past the 10 s deadline
    # cap, which is scaled by the slowdown (calibration; 10 s on a quiet machine)
    cap_env, cap_s = caps(slowdown())
    srv = serve(workers=2, env={"DEPTREE_CACHE": "false",
                                "DEPTREE_REQUEST_TIMEOUT_S": str(TIMEOUT_S), **cap_env})
    with srv.client() as c:
        workers = [w["pid"] for w in c.get("/ready").json()["workers"]["workers"]]
        load = Load(srv.url, n, batches(4), per_thread=1, cap_s=cap_s).start()
        t0 = time.monotonic()
        while time.monotonic() - t0 < 30:              # every request has reached a worker
            st = c.get("/ready").json()["workers"]     # or the queue: all are accepted
            if st["in_flight"] + st["queue_depth"] + len(load.outcomes) >= n:
                break
            time.sleep(0.02)
    assert st["queue_depth"] > 0, "the gateway should still be holding queued requests"
    srv.proc.send_signal(signal.SIGTERM)
    if who == "process group":
        for pid in workers:
            os.kill(pid, signal.SIGTERM)
    assert refused(srv.url, 5), "new connections still accepted after SIGTERM"
    assert len(load.outcomes) < n, "the drain had ended before connections were refused"
    outcomes = load.finish()
    check_answered(outcomes, TIMEOUT_S + 5)
    assert load.statuses() == {200: n}
    # uvicorn re-raises the SIGTERM it handled once shut down: -15 after a clean exit
    assert srv.proc.wait(30) in (0, -signal.SIGTERM)
    assert "Application shutdown complete" in srv.tail(200)
    assert not any(alive(pid) for pid in workers)
    assert "died" not in srv.tail(200)                 # no worker was lost on the way


def test_sigterm_stream_worker_finishes_its_job_and_the_other_takes_the_rest(
        serve, redis_server, stream_worker, slow, tmp_path):
    """The `deptree worker` holding a 6 s job gets SIGTERM amid 16 short requests: it keeps
    the job claimed while it ends it (the other never reclaims it), the other takes the
    rest, every client gets its answer."""
    rs = redis_server()
    # a claim interval well under the long job's time left after SIGTERM, yet long enough
    # that a loaded machine does not delay a heartbeat past it
    env = {"DEPTREE_REDIS_URL": rs.url, "DEPTREE_CLAIM_IDLE_MS": "2500",
           "DEPTREE_REQUEST_TIMEOUT_S": str(TIMEOUT_S), "DEPTREE_CACHE": "false",
           "DEPTREE_BUDGET_CAPS": '{"restarts": 10000, "converge": 10000}'}
    workers = [stream_worker(env), stream_worker(env)]
    srv = serve(workers=0, args=["--backend", "redis"], ready_workers=2, env=env)
    r = rs.client()
    tokens, budget = slow
    long_job = Load(srv.url, 1, lambda i: {"sentences": [tokens], **budget,
                                           "deadline_ms": 6000}, per_thread=1).start()
    t0 = time.monotonic()
    holder = None
    while holder is None and time.monotonic() - t0 < 30:
        for p in r.xpending_range("deptree:jobs", "workers", "-", "+", 10):
            pid = int(p["consumer"].rsplit(":", 1)[1])
            if alive(pid):
                holder = parent(pid)            # the `deptree worker` supervising it
        time.sleep(0.02)
    victim = next(i for i, w in enumerate(workers) if w.pid == holder)
    load = Load(srv.url, 8, batches(4, skip=300), per_thread=2).start()
    workers[victim].send_signal(signal.SIGTERM)
    assert workers[victim].wait(TIMEOUT_S) == 0        # after finishing its job
    outcomes = long_job.finish() + load.finish()
    check_answered(outcomes, TIMEOUT_S + 5)
    assert long_job.statuses() == {200: 1} and load.statuses() == {200: 16}
    assert long_job.outcomes[0].body["sentences"][0]["stats"]["deadline_hit"]
    assert r.xlen("deptree:jobs") == 0 and not r.xpending("deptree:jobs", "workers")["pending"]
    assert "reclaimed" not in (tmp_path / f"worker{1 - victim}.log").read_text(), \
        "the stopping worker's job was decoded twice"
    with srv.client() as c:
        f = slowdown()                          # heartbeats are late on a busy machine
        t0 = time.monotonic()                   # the victim left the worker set on its way out
        while len(c.get("/ready").json()["workers"]["workers"]) != 1:
            assert time.monotonic() - t0 < 5 * f, c.get("/ready").json()["workers"]
            time.sleep(0.2)
        assert c.post("/parse", json={"sentences": ["One worker is left ."]}).status_code == 200
