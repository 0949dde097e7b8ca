"""Faults of the embedded (local) backend under load, each bounded in time: a worker
killed with SIGKILL, requests cut at their deadline, clients that hang up or send
their body slowly. What must hold: every request sent is answered (200, or 503 with
an error code and Retry-After), none after its bound, and the workers end idle.

On a busy machine (issue 61) the load's requests cost less search (`load_driver.busy`)
and the times that are CPU work (a deadline expected to be met with complete trees,
the time the workers need to stop) are scaled by the slowdown measured before
(`load_calibration`, calibration: 1.0 on a quiet machine, where the tests are as strict
as before)."""
from __future__ import annotations

import os
import signal
import socket
import threading
import time

import httpx
from load_calibration import is_busy, slowdown
from load_driver import Load, batches, check_answered

TIMEOUT_S = 30                                   # request_timeout_s of these servers


def status(c: httpx.Client) -> dict:
    return c.get("/ready").json()["workers"]


def wait_idle(c: httpx.Client, timeout: float) -> dict:
    """Until no job is queued or held (the slots are free again); the last status."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        st = status(c)
        if st["in_flight"] == 0 and st["queue_depth"] == 0:
            return st
        time.sleep(0.1)
    raise AssertionError(f"workers still busy after {timeout}s: {st}")


def busy_worker(c: httpx.Client, timeout: float = 20) -> dict:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        for w in status(c)["workers"]:
            if w["busy"] and w["state"] == "busy":
                return w
        time.sleep(0.02)
    raise AssertionError("no worker was busy")


def test_sigkill_worker_under_load_every_request_answered(serve):
    srv = serve(workers=2, env={"DEPTREE_CACHE": "false",
                                "DEPTREE_REQUEST_TIMEOUT_S": str(TIMEOUT_S)})
    with srv.client() as c:
        load = Load(srv.url, 8, batches(), per_thread=4).start()
        load.wait_done(8, 60)
        victim = busy_worker(c)
        os.kill(victim["pid"], signal.SIGKILL)
        outcomes = load.finish()
        check_answered(outcomes, TIMEOUT_S + 5, allow_503=("worker_crashed",))
        crashed = [o for o in outcomes if o.status == 503]
        assert len(crashed) <= 1, load.statuses()      # only the job the victim held
        assert len(outcomes) == 32
        after = srv.wait_ready(workers=2, timeout=60)["workers"]
        pids = {w["pid"] for w in after["workers"] if w["state"] in ("idle", "busy")}
        assert victim["pid"] not in pids and len(pids) == 2
        wait_idle(c, 10)
        assert c.post("/parse", json={"sentences": ["After the crash it still parses ."]}
                      ).status_code == 200
        assert 'deptree_worker_restarts_total{reason="crash"}' in c.get("/metrics").text


def test_decode_past_the_deadline_is_answered_at_the_deadline_under_load(server, slow):
    """Long sentences with deadline_ms under load from other clients: answered by about
    the deadline, each tree complete and marked deadline_hit (greedy and sampling). The
    accurate tagger: the decoders' search is what stops at the deadline, while a tagger's
    analysis runs whole (the contextual one, the default where the model has it, takes
    0.8 to 0.95 s for these 597 words on a quiet machine, and past 1.5 s under this
    load the job is answered 504, as tests/reliability/test_lookahead.py expects).

    Calibration: the deadline is 1.5 s of search (scaled by the slowdown measured
    before the load) plus twice what the same request took by `mst` under this load
    (queueing behind the load's jobs and the whole analysis, which no deadline cuts).
    A spin loop's slowdown does not see everything that slows the service: the CI
    machine spun at full speed (x1.0) and took 2.5 times as long over the suite, and
    the 1.5 s deadline got 504. A search that ignored its deadline would still run for
    minutes (10,000 restarts of 200 words) and fail the bound on any machine."""
    with server.client() as c:
        f = slowdown()               # the search's share: 1.5 s on a quiet machine
        load = Load(server.url, 4, batches(skip=100), per_thread=4).start()
        try:
            sents = [slow[0][:200 - i] for i in range(3)]
            t0 = time.monotonic()
            r = c.post("/parse", json={"sentences": sents, "decoder": "mst",
                                       "tagger": "accurate"})
            before = time.monotonic() - t0
            assert r.status_code == 200, r.text
            deadline_s = 1.5 * f + 2 * before
            for decoder, budget in (("greedy", {"restarts": 10000, "converge": 10000}),
                                    ("sampling", {"samples": 10000, "converge": 10000})):
                t0 = time.monotonic()
                r = c.post("/parse", json={"sentences": sents, "decoder": decoder,
                                           "tagger": "accurate",
                                           "deadline_ms": 1000 * deadline_s, **budget})
                took = time.monotonic() - t0
                what = f"{decoder}: deadline {deadline_s:.2f}s (mst {before:.2f}s, x{f:.1f})"
                assert took <= deadline_s + 1.0 * f, f"answered after {took:.2f}s; {what}"
                if is_busy(f) and r.status_code == 504:   # see load_calibration.is_busy
                    assert r.json()["error"]["code"] == "deadline_exceeded"
                    continue
                assert r.status_code == 200, f"{r.text}; {what}"
                out = r.json()["sentences"]
                assert [len(s["tokens"]) for s in out] == [200, 199, 198]
                assert all(s["stats"]["deadline_hit"] for s in out), [s["stats"] for s in out]
                assert all(sum(t["head"] == 0 for t in s["tokens"]) >= 1 for s in out)
        finally:
            outcomes = load.finish(stop=True)
        check_answered(outcomes, 60)
        wait_idle(c, 10 * f)


def test_clients_that_hang_up_free_their_worker_slots(server, slow):
    """Six slow requests whose clients give up after 0.5 s: the queued ones are never
    decoded, the held ones end at their deadline; then the service is idle and serves."""
    tokens = slow[0]
    with server.client() as c:
        f = slowdown()               # how long the held jobs take to stop: CPU
        served0 = sum(w["served"] for w in status(c)["workers"])

        def give_up(i: int) -> None:   # after 0.5 s of a quiet machine: all 6 are queued
            try:
                httpx.post(server.url + "/parse", timeout=0.5 * f,
                           json={"sentences": [tokens + [f"hangup{i}x{time.time()}"]],
                                 "restarts": 10000, "converge": 10000, "deadline_ms": 2500})
            except httpx.TimeoutException:
                pass                                  # the client hangs up here
        clients = [threading.Thread(target=give_up, args=(i,)) for i in range(6)]
        for t in clients:
            t.start()
        for t in clients:
            t.join(10)
        st = wait_idle(c, (2.5 + 5) * f)
        served = sum(w["served"] for w in st["workers"]) - served0
        assert served <= 2, f"{served} jobs of clients that left were decoded"
        r = c.post("/parse", json={"sentences": ["After the clients left ."]})
        assert r.status_code == 200
        assert "deptree_in_flight 0.0" in c.get("/metrics").text


def test_slow_body_holds_no_worker_and_is_answered_when_complete(server):
    """A client trickling its body (slowloris) holds a connection, not a worker: others
    are served meanwhile, and it is answered once its body is complete."""
    body = b'{"sentences": ["A slow client sent this sentence ."]}'
    host, port = server.url.rsplit("/", 1)[1].split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s, server.client() as c:
        s.sendall(b"POST /parse HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body) + body[:10])
        for i in range(3):
            time.sleep(0.5)
            assert status(c)["in_flight"] == 0
            r = c.post("/parse", json={"sentences": [f"Meanwhile request {i} is served ."]})
            assert r.status_code == 200
        s.sendall(body[10:])
        reply = b""
        while b"\r\n\r\n" not in reply:
            chunk = s.recv(65536)
            assert chunk, "connection closed without an answer"
            reply += chunk
        assert reply.startswith(b"HTTP/1.1 200"), reply[:200]
