"""The local backend's queue is served earliest deadline first: with the one worker
busy, a request with a short deadline that arrives after one without any is answered
first (it used to wait its turn, and answered 504 under load)."""
from __future__ import annotations

import threading
import time

import httpx
from conftest import SLOW_CAPS


def test_the_job_due_first_is_served_first(serve, slow):
    tokens, budget = slow
    srv = serve(workers=1, env={**SLOW_CAPS, "DEPTREE_CACHE": "false"})
    done: dict[str, tuple[float, httpx.Response]] = {}

    def post(name: str, body: dict) -> None:
        r = httpx.post(srv.url + "/parse", json=body, timeout=60)
        done[name] = (time.monotonic(), r)

    def busy() -> bool:
        return any(w["busy"] for w in httpx.get(srv.url + "/ready").json()["workers"]["workers"])

    blocker = threading.Thread(target=post, args=("blocker", {
        "sentences": [tokens], **budget, "deadline_ms": 4000}))
    blocker.start()
    t0 = time.monotonic()
    while not busy():
        assert time.monotonic() - t0 < 10, "the worker never took the blocking job"
        time.sleep(0.02)
    # queued while the worker is busy: `later` without a deadline (the cap's, 10 s),
    # then `sooner` with 5 s. `later` runs until its deadline, so that the two answers
    # arrive seconds apart in either order: the client's clock can then tell them apart
    # however loaded the machine is.
    later = threading.Thread(target=post, args=("later", {"sentences": [tokens], **budget}))
    later.start()
    while httpx.get(srv.url + "/ready").json()["workers"]["queue_depth"] < 1:
        assert "blocker" not in done, "the blocking job ended before the queue filled"
        time.sleep(0.01)
    sooner = threading.Thread(target=post, args=("sooner", {
        "sentences": ["Queued second , due first ."], "deadline_ms": 5000}))
    sooner.start()
    while httpx.get(srv.url + "/ready").json()["workers"]["queue_depth"] < 2:
        assert "blocker" not in done, "the blocking job ended before both were queued"
        time.sleep(0.01)
    for t in (blocker, later, sooner):
        t.join(60)
    assert all(r.status_code == 200 for _, r in done.values()), {
        k: r.text[:200] for k, (_, r) in done.items()}
    # (the blocker was served first: the one worker held it while both were queued; its
    # answer and the short `sooner`'s arrive within milliseconds, too close to order)
    assert done["sooner"][0] < done["later"][0]
    assert done["later"][1].json()["sentences"][0]["stats"]["deadline_hit"]
