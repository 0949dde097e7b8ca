"""A worker that dies on a request is restarted; that request gets a clear 503 and the
other requests are unaffected. A worker past its request quota is recycled without
dropping a request."""
from __future__ import annotations

import os
import signal
import threading
import time

import httpx


def busy_worker(c: httpx.Client, timeout: float = 30) -> dict:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        for w in c.get("/ready").json()["workers"]["workers"]:
            if w["busy"]:
                return w
        time.sleep(0.05)
    raise AssertionError("no worker took the slow request")


def test_crashed_worker_is_restarted_and_others_unaffected(server, slow):
    tokens, budget = slow
    with server.client() as c:
        before = c.get("/ready").json()["workers"]
        assert before["workers_up"] == 2
        slow_result: dict = {}

        def send_slow() -> None:
            r = c.post("/parse", json={"sentences": [tokens], **budget, "deadline_ms": 8000})
            slow_result["r"] = r

        t = threading.Thread(target=send_slow)
        t.start()
        victim = busy_worker(c)
        os.kill(victim["pid"], signal.SIGKILL)
        # meanwhile the other worker answers
        others = [c.post("/parse", json={"sentences": [f"Other request {i} ran ."]})
                  for i in range(4)]
        t.join(30)
        r = slow_result["r"]
        assert r.status_code == 503, r.text
        assert r.json()["error"]["code"] == "worker_crashed"
        assert all(o.status_code == 200 for o in others)
        after = server.wait_ready(workers=2)["workers"]
        pids = {w["pid"] for w in after["workers"]}
        assert victim["pid"] not in pids and len(pids) == 2
        assert c.post("/parse", json={"sentences": ["After the crash ."]}).status_code == 200
        metrics = c.get("/metrics").text
        assert 'deptree_worker_restarts_total{reason="crash"}' in metrics


def test_worker_recycled_after_max_requests_drops_nothing(serve):
    srv = serve(workers=1, env={"DEPTREE_MAX_REQUESTS_PER_WORKER": "3", "DEPTREE_CACHE": "false"})
    with srv.client() as c:
        first = c.get("/ready").json()["workers"]["workers"][0]["pid"]
        results: list[int] = []

        def send(i: int) -> None:
            results.append(c.post("/parse", json={"sentences": [f"Request {i} went fine ."]})
                           .status_code)

        threads = [threading.Thread(target=send, args=(i,)) for i in range(12)]
        for th in threads:
            th.start()
            time.sleep(0.05)
        for th in threads:
            th.join(60)
        assert results == [200] * 12
        # the replacement warms while the old worker keeps serving, then takes over
        t0 = time.monotonic()
        while time.monotonic() - t0 < 120:
            workers = c.get("/ready").json()["workers"]["workers"]
            if [w["pid"] for w in workers if w["state"] in ("idle", "busy")] not in ([], [first]):
                break
            time.sleep(0.2)
        assert first not in [w["pid"] for w in workers if w["state"] in ("idle", "busy")]
        assert c.post("/parse", json={"sentences": ["After recycling ."]}).status_code == 200
        assert 'deptree_worker_restarts_total{reason="recycle"}' in c.get("/metrics").text
