"""Faults around Redis under load, each bounded in time: a stream worker killed with
SIGKILL (redis backend), redis-server restarted (as the cache of the local backend,
and as the job queue of the redis backend), and Redis filled to its maxmemory.
What must hold: every request sent is answered (200, or 503 with an error code and
Retry-After), none after its bound, and the service recovers by itself."""
from __future__ import annotations

import os
import signal
import time

import httpx
import pytest
from load_calibration import slowdown
from load_driver import Load, batches, caps, check_answered

from app.dispatch.redis_stream import OUTAGE_GRACE_S

TIMEOUT_S = 30
STREAM = {"DEPTREE_CLAIM_IDLE_MS": "1000", "DEPTREE_REQUEST_TIMEOUT_S": str(TIMEOUT_S)}


def pending_holder(r, timeout: float = 20) -> int:
    """pid of a stream worker holding a job right now (consumer names end in :pid)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        pend = r.xpending_range("deptree:jobs", "workers", "-", "+", 10)
        if pend:
            return int(pend[0]["consumer"].rsplit(":", 1)[1])
        time.sleep(0.02)
    raise AssertionError("no worker held a job")


def worker_pids(c: httpx.Client) -> set[int]:
    return {w["pid"] for w in c.get("/ready").json()["workers"]["workers"]}




def test_sigkill_stream_worker_under_load_job_reclaimed(serve, redis_server, wait_for):
    rs = redis_server()
    cap_env, cap_s = caps(slowdown())         # see test_redis_full_evicts_...
    srv = serve(workers=2, args=["--backend", "redis"],
                env={"DEPTREE_REDIS_URL": rs.url, "DEPTREE_CACHE": "false", **STREAM,
                     **cap_env})
    r = rs.client()
    with srv.client() as c:
        load = Load(srv.url, 8, batches(), per_thread=4, cap_s=cap_s).start()
        load.wait_done(8, 60)
        victim = pending_holder(r)
        os.kill(victim, signal.SIGKILL)
        outcomes = load.finish()
        # the victim's job is reclaimed by the other worker: nobody even sees a 503
        check_answered(outcomes, TIMEOUT_S + 5)
        assert load.statuses() == {200: 32}
        wait_for(lambda: len(pids := worker_pids(c)) == 2 and victim not in pids, 60,
                 "the killed worker replaced")
        assert c.post("/parse", json={"sentences": ["After the kill ."]}).status_code == 200
    assert r.xlen("deptree:jobs") == 0 and not r.xpending("deptree:jobs", "workers")["pending"]


def test_redis_cache_restart_under_load_no_errors_cache_resumes(serve, redis_server,
                                                               wait_for):
    """Local backend with a Redis cache: Redis killed and started again mid-load."""
    rs = redis_server()
    cap_env, cap_s = caps(slowdown())         # see test_redis_full_evicts_...
    srv = serve(workers=2, env={"DEPTREE_REDIS_URL": rs.url, "DEPTREE_REDIS_RETRY_S": "0.5",
                                "DEPTREE_REQUEST_TIMEOUT_S": str(TIMEOUT_S), **cap_env})
    with srv.client() as c:
        # 40 distinct sentences asked again and again: most answers come from the cache
        load = Load(srv.url, 8, batches(repeat=40, restarts=200, converge=200),
                    per_thread=15, cap_s=cap_s).start()
        load.wait_done(40, 60)
        rs.stop()
        load.wait_done(len(load.outcomes) + 16, 60)      # served with Redis down
        rs.start()
        outcomes = load.finish()
        check_answered(outcomes, TIMEOUT_S + 5)
        assert load.statuses() == {200: 120}
        wait_for(lambda: c.get("/ready").json()["cache"]["status"] == "up", 10, "cache up")
        body = {"sentences": ["The cache is back after the restart ."]}
        assert not c.post("/parse", json=body).json()["sentences"][0]["cached"]
        assert c.post("/parse", json=body).json()["sentences"][0]["cached"]


def test_redis_queue_restart_under_load_answers_and_recovers(serve, redis_server, wait_for):
    """Redis backend: the job queue itself restarts (empty) mid-load. A short outage is
    ridden out (the gateway sends lost jobs again; workers re-create the consumer group
    and re-publish their models), so no client sees an error. A longer outage is a 503
    with Retry-After within the grace period, never a hang, and the service recovers."""
    rs = redis_server()
    cap_env, cap_s = caps(slowdown())         # see test_redis_full_evicts_...
    srv = serve(workers=2, args=["--backend", "redis"],
                env={"DEPTREE_REDIS_URL": rs.url, "DEPTREE_CACHE": "false", **STREAM,
                     **cap_env})
    with srv.client() as c:
        load = Load(srv.url, 8, batches(), per_thread=5, cap_s=cap_s).start()
        load.wait_done(8, 60)
        rs.stop()
        time.sleep(1.0)
        rs.start()
        outcomes = load.finish()
        check_answered(outcomes, TIMEOUT_S + 5)
        assert load.statuses() == {200: 40}

        rs.stop()                                   # down for longer than the grace period
        t0 = time.monotonic()
        r = c.post("/parse", json={"sentences": ["Redis is down for a while ."]})
        assert time.monotonic() - t0 < OUTAGE_GRACE_S + 5
        assert r.status_code == 503 and int(r.headers["retry-after"]) > 0, r.text
        assert r.json()["error"]["code"] in ("dispatch_unavailable", "no_workers")
        rs.start()
        wait_for(lambda: c.get("/ready").status_code == 200, 30, "ready again")
        again = [c.post("/parse", json={"sentences": [f"Back to work {i} ."]}) for i in range(4)]
        assert [a.status_code for a in again] == [200] * 4, again[-1].text


def fill(r, until_free: int) -> int:
    """Write TTL'd filler cache entries until less than `until_free` bytes are left."""
    limit = int(r.config_get("maxmemory")["maxmemory"])
    n = 0
    while int(r.info("memory")["used_memory"]) < limit - until_free:
        pipe = r.pipeline()
        for _ in range(50):
            pipe.set(f"deptree:cache:filler{n}", "x" * 2000, ex=3600)
            n += 1
        pipe.execute()
    return n


@pytest.mark.parametrize("backend,policy", [("local", "allkeys-lru"), ("local", "noeviction"),
                                            ("redis", "volatile-lru")])
def test_redis_full_evicts_and_requests_never_fail(serve, redis_server, backend, policy):
    """Redis at its maxmemory (set by the service: redis_maxmemory, redis_maxmemory_policy):
    cache entries are evicted (or, with noeviction, not stored) and no request fails."""
    rs = redis_server()
    r = rs.client()
    limit = int(r.info("memory")["used_memory"]) + 3 * 2**20
    # 40 requests of 8 sentences through 2 workers: on a busy machine the last ones wait
    # longer than the 10 s deadline cap; the cap is scaled by the slowdown (calibration)
    cap_env, cap_s = caps(slowdown())
    env = {"DEPTREE_REDIS_URL": rs.url, "DEPTREE_REDIS_MAXMEMORY": str(limit),
           "DEPTREE_REDIS_MAXMEMORY_POLICY": policy, "DEPTREE_REQUEST_TIMEOUT_S": str(TIMEOUT_S),
           **STREAM, **cap_env}
    args = ["--backend", "redis"] if backend == "redis" else []
    srv = serve(workers=2, env=env, args=args)
    assert r.config_get("maxmemory-policy")["maxmemory-policy"] == policy
    fill(r, 200_000)
    load = Load(srv.url, 8, batches(n_per=8, skip=200, decoder="mst"), per_thread=5,
                cap_s=cap_s).start()
    outcomes = load.finish()
    check_answered(outcomes, TIMEOUT_S + 5)
    assert load.statuses() == {200: 40}
    mem = r.info("memory")
    assert int(mem["used_memory"]) <= limit + 2**20
    evicted = int(r.info("stats")["evicted_keys"])
    if policy == "noeviction":
        assert evicted == 0
    else:
        assert evicted > 0
    with srv.client() as c:
        ready = c.get("/ready")
        assert ready.status_code == 200 and ready.json()["cache"]["status"] == "up"
