"""What a request gets while the redis backend's Redis is down (issue 61, defect 6): its
own deadline ends first -> 504 `deadline_exceeded`, as for any late answer; the outage
outlasts the 5 s the gateway waits for Redis -> 503 with Retry-After; Redis back ->
200 again. A real redis-server is stopped and started again on its port."""
from __future__ import annotations

import time
import uuid


def test_redis_outage_gives_504_at_the_deadline_and_503_past_the_grace(serve, redis_server,
                                                                      wait_for):
    rs = redis_server()
    srv = serve(workers=1, args=["--backend", "redis"], env={"DEPTREE_REDIS_URL": rs.url})
    with srv.client() as c:
        def parse(**budget):
            body = {"sentences": [f"The cat {uuid.uuid4().hex[:6]} sat ."], "decoder": "mst",
                    **budget}
            t0 = time.monotonic()
            r = c.post("/parse", json=body)
            return r, time.monotonic() - t0

        assert parse()[0].status_code == 200
        rs.stop()                                   # Redis goes away (a restart, a crash)
        r, took = parse(deadline_ms=1500)
        assert r.status_code == 504, r.text
        err = r.json()["error"]
        assert (err["code"], err["limit"], err["value"]) == ("deadline_exceeded",
                                                             "deadline_ms", 1500)
        # within its deadline plus the gateway's grace (0.8 s), plus slack for a busy host
        assert took < 1.5 + 0.8 + 2.0, took
        # a request whose deadline is longer than the outage grace: 503, not a hang
        r, took = parse(deadline_ms=9000)
        assert r.status_code == 503, r.text
        assert r.json()["error"]["code"] in ("dispatch_unavailable", "no_workers")
        assert r.headers.get("retry-after")
        assert took < 9.0, took
        redis_server(rs.port)                       # back on the same port
        wait_for(lambda: parse()[0].status_code == 200, 60, "a 200 after Redis is back")
