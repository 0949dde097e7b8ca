"""The Redis cache: hits across requests, and an outage degrades to no cache (never to
errors) and shows in /ready and the metrics; when Redis returns, caching resumes."""
from __future__ import annotations

import time
import uuid


def test_redis_cache_hit_then_outage_then_recovery(serve, redis_server):
    rs = redis_server()
    srv = serve(workers=1, env={"DEPTREE_REDIS_URL": rs.url, "DEPTREE_REDIS_RETRY_S": "0.5"})
    body = {"sentences": [f"The cached dog {uuid.uuid4().hex[:6]} slept .", ["Two", "words"]]}
    with srv.client() as c:
        ready = c.get("/ready").json()
        assert ready["cache"] == {"backend": "redis", "status": "up"}
        first = c.post("/parse", json=body).json()
        assert [s["cached"] for s in first["sentences"]] == [False, False]
        assert len(rs.client().keys("deptree:cache:*")) == 2
        second = c.post("/parse", json=body).json()
        assert [s["cached"] for s in second["sentences"]] == [True, True]
        assert second["sentences"][0]["tokens"] == first["sentences"][0]["tokens"]

        port = rs.port
        rs.stop()                                           # Redis killed mid-run
        for _ in range(3):
            r = c.post("/parse", json=body)
            assert r.status_code == 200, r.text
            assert [s["cached"] for s in r.json()["sentences"]] == [False, False]
            assert r.json()["sentences"][0]["tokens"] == first["sentences"][0]["tokens"]
        new = c.post("/parse", json={"sentences": ["A new sentence while Redis is down ."]})
        assert new.status_code == 200
        r = c.get("/ready")
        assert r.status_code == 200                         # serving, uncached
        assert r.json()["status"] == "degraded" and r.json()["cache"]["status"] == "down"
        assert "deptree_cache_up 0.0" in c.get("/metrics").text

        redis_server(port)                                  # Redis is back (empty)
        time.sleep(0.6)
        assert c.get("/ready").json()["cache"]["status"] == "up"
        c.post("/parse", json=body)
        again = c.post("/parse", json=body).json()
        assert [s["cached"] for s in again["sentences"]] == [True, True]


def test_ready_can_require_the_cache(serve, redis_server):
    rs = redis_server()
    srv = serve(workers=1, env={"DEPTREE_REDIS_URL": rs.url, "DEPTREE_READY_REQUIRES_CACHE": "1"})
    rs.stop()
    with srv.client() as c:
        r = c.get("/ready")
        assert r.status_code == 503 and r.json()["cache"]["status"] == "down"
        assert c.post("/parse", json={"sentences": [["Still", "served"]]}).status_code == 200


def test_memory_settings_come_back_with_a_restarted_redis(serve, redis_server):
    """maxmemory and its policy are set again when the cache sees Redis back after an
    outage (a restarted redis-server without them in its redis.conf has lost them)."""
    rs = redis_server()
    srv = serve(workers=1, env={"DEPTREE_REDIS_URL": rs.url, "DEPTREE_REDIS_RETRY_S": "0.2",
                                "DEPTREE_REDIS_MAXMEMORY": "64mb",
                                "DEPTREE_REDIS_MAXMEMORY_POLICY": "allkeys-lru"})
    assert rs.client().config_get("maxmemory-policy")["maxmemory-policy"] == "allkeys-lru"
    port = rs.port
    with srv.client() as c:
        rs.stop()
        assert c.get("/ready").json()["cache"]["status"] == "down"
        back = redis_server(port)
        deadline = time.monotonic() + 20
        while c.get("/ready").json()["cache"]["status"] != "up":
            assert time.monotonic() < deadline
            time.sleep(0.3)
    cfg = back.client().config_get("maxmemory*")
    assert cfg["maxmemory"] == str(64 * 2**20) and cfg["maxmemory-policy"] == "allkeys-lru"
