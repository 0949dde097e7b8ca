"""The redis backend end to end: a gateway with no local workers, two `deptree worker`
processes on a Redis Stream; a batch is shared between them, and a request held by a
worker that is killed is reclaimed (XAUTOCLAIM) by the other and still answered."""
from __future__ import annotations

import os
import signal
import threading
import time

import pytest

STREAM = {"DEPTREE_CLAIM_IDLE_MS": "1000", "DEPTREE_CHUNK_SENTENCES": "4",
          "DEPTREE_BUDGET_CAPS": '{"restarts": 10000, "converge": 10000}'}


@pytest.fixture
def cluster(serve, redis_server, stream_worker):
    rs = redis_server()
    workers = [stream_worker({"DEPTREE_REDIS_URL": rs.url, **STREAM}) for _ in range(2)]
    srv = serve(workers=0, args=["--backend", "redis"], ready_workers=2,
                env={"DEPTREE_REDIS_URL": rs.url, **STREAM})
    return srv, rs, workers


def test_two_workers_share_a_batch(cluster):
    srv, rs, _ = cluster
    batch = [f"Sentence number {i} of the shared batch ." for i in range(40)]
    with srv.client() as c:
        # 10 jobs of 4 sentences, each long enough that one worker cannot drain them all
        r = c.post("/parse", json={"sentences": batch, "restarts": 500, "converge": 500})
        assert r.status_code == 200, r.text
        sents = r.json()["sentences"]
        assert [s["text"] for s in sents] == batch and not any(s["cached"] for s in sents)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 10:         # heartbeats carry the served counts
            served = [w["served"] for w in c.get("/ready").json()["workers"]["workers"]]
            if len(served) == 2 and all(n > 0 for n in served) and sum(served) >= 10:
                break
            time.sleep(0.3)
        assert len(served) == 2 and all(n > 0 for n in served), served
        assert c.get("/models").json()["models"]["en_ewt"]["decoders"]
    assert rs.client().xlen("deptree:jobs") == 0     # every job acknowledged and deleted


def test_killed_worker_request_is_reclaimed_and_answered(cluster, slow):
    srv, rs, _ = cluster
    tokens, budget = slow
    r_cli = rs.client()
    out: dict = {}
    # the deadline covers the killed worker's part, the reclaim and the search again: 4 s
    # of it on a quiet machine, scaled by the slowdown measured now (`load_calibration`,
    # calibration; issue 61: 504 with two busy loops beside the tests), within the cap
    from load_calibration import is_busy, slowdown

    f = slowdown()
    deadline_ms = min(10_000, 4000 * f)
    with srv.client(timeout=90) as c:
        def send() -> None:
            out["r"] = c.post("/parse", json={"sentences": [tokens], **budget,
                                               "deadline_ms": deadline_ms})
        t = threading.Thread(target=send)
        t.start()
        holder = None
        t0 = time.monotonic()
        while holder is None and time.monotonic() - t0 < 30:
            pending = r_cli.xpending_range("deptree:jobs", "workers", "-", "+", 10)
            if pending:
                holder = pending[0]["consumer"]
            time.sleep(0.05)
        assert holder, "no worker picked the job up"
        pid = int(holder.rsplit(":", 1)[1])
        os.kill(pid, signal.SIGKILL)                 # dies while holding the request
        t.join(60)
        r = out["r"]
        if is_busy(f) and r.status_code == 504:         # see load_calibration.is_busy
            assert r.json()["error"]["code"] == "deadline_exceeded"
        else:
            assert r.status_code == 200, f"{r.text} (slowdown x{f:.1f})"
            assert r.json()["sentences"][0]["tokens"]
        # acknowledged and deleted by the worker that reclaimed it
        t0 = time.monotonic()
        while r_cli.xlen("deptree:jobs") and time.monotonic() - t0 < 20:
            time.sleep(0.2)
        assert r_cli.xlen("deptree:jobs") == 0


def test_tagger_travels_with_the_job_to_stream_workers(cluster, ewt_dev_tokens):
    """The workers publish their models' taggers; a job's tagger reaches them over the
    stream (the accurate tagger's answers differ from the fast one's: 2 tags of these 16
    sentences' 320 words; with 32, the contextual tagger's request got 504 at the 10 s
    deadline cap on a slow VM)."""
    srv, _, _ = cluster
    sents = ewt_dev_tokens(16)
    with srv.client() as c:
        taggers = c.get("/models").json()["models"]["en_ewt"]["taggers"]
        assert taggers[0] == "fast"
        tags = {}
        for tagger in taggers:
            r = c.post("/parse", json={"sentences": sents, "decoder": "mst", "tagger": tagger})
            assert r.status_code == 200 and r.json()["tagger"] == tagger, r.text
            tags[tagger] = [[t["upos"] for t in s["tokens"]] for s in r.json()["sentences"]]
    if "accurate" in tags:
        assert tags["accurate"] != tags["fast"]
