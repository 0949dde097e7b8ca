"""A request's deadline covers all of its job (issue 20, defect 1): the partner decoder
of `ensemble_with` ran with no budget at all (two 250-token sentences with bgi +
greedy and deadline_ms=1 took 6.15 s), and a job went on to its last sentence
whatever its deadline and whether or not its client was still there (a 256-sentence
`text` is one job: minutes of worker time, repeatable at will since such trees are
not cached). Now every stage of a sentence (tagging, re-tagging, partner, decoder)
shares the deadline, the gateway answers by the deadline plus 0.8 s (504
`deadline_exceeded` when the trees are not done), and a job stops between sentences
once its client has gone or nobody waits for it any more.

On a busy machine (issue 61: two busy loops beside the tests) the same work takes two or
three times as long, so every time here that is CPU work (a deadline the test expects to
be met with complete trees, the bound beyond a deadline, the time a worker needs to
stop) is scaled by the slowdown measured before the request (`load_calibration`,
calibration: 1.0 on a quiet machine, where each test is as strict as before and still
fails when the service misses its deadline)."""
from __future__ import annotations

import threading
import time

import httpx
import pytest
from load_calibration import is_busy, slowdown

BOUND_S = 1.0                 # the bound: the deadline plus one second

WORDS = ["the", "old", "dogs", "near", "green", "houses", "barked", "at", "many", "people",
         "while", "they", "walked", "slowly", "into", "distant", "fields", "and", "talked",
         "about", "strange", "music", "from", "cities"]


def long_text(n_sentences: int = 256, words: int = 60) -> str:
    """`n_sentences` sentences of `words` distinct-ish words: a job of minutes' work at a
    budget that runs every sentence to its deadline."""
    sents = []
    for i in range(n_sentences):
        w = [f"{WORDS[(i + j) % len(WORDS)]}{j if j >= len(WORDS) else ''}"
             for j in range(words)]
        sents.append(" ".join(["Then"] + w) + " .")
    return " ".join(sents)


def busy(c: httpx.Client) -> list:
    workers = c.get("/ready").json()["workers"]["workers"]
    return [w for w in workers if w.get("busy")]


def wait_idle(c: httpx.Client, timeout: float) -> float:
    """Seconds until no worker holds a job (fails after `timeout`)."""
    t0 = time.monotonic()
    while busy(c):
        assert time.monotonic() - t0 < timeout, f"a worker still busy after {timeout}s"
        time.sleep(0.05)
    return time.monotonic() - t0


@pytest.mark.parametrize("partner", ["greedy", "selectional", "mst"])
def test_ensemble_with_keeps_the_deadline(server, long_tokens, partner):
    tokens = long_tokens(250)
    f = slowdown()                   # the deadline is for work: 2 s on a quiet machine
    body = {"sentences": [tokens, tokens[::-1]], "decoder": "bgi", "ensemble_with": partner,
            "deadline_ms": 2000 * f}
    with server.client() as c:
        t0 = time.monotonic()
        r = c.post("/parse", json=body)
        took = time.monotonic() - t0
        assert took <= (2.0 + BOUND_S) * f, f"{partner}: answered after {took:.2f}s (x{f:.1f})"
        if is_busy(f) and r.status_code == 504:       # see load_calibration.is_busy
            assert r.json()["error"]["code"] == "deadline_exceeded"
        else:
            assert r.status_code == 200, f"{r.text} (slowdown x{f:.1f})"
            out = r.json()["sentences"]
            assert [len(s["tokens"]) for s in out] == [250, 250]
            assert all(sum(t["head"] == 0 for t in s["tokens"]) >= 1 for s in out)
        wait_idle(c, 5 * f)


def test_tiny_deadline_with_a_partner_is_answered_within_a_second(server, long_tokens):
    """The issue's request: 200 with complete trees, or 504 deadline_exceeded if even
    the least work (one step of each decoder) does not fit; never 6 s."""
    tokens = long_tokens(250)
    f = slowdown()
    with server.client() as c:
        t0 = time.monotonic()
        r = c.post("/parse", json={"sentences": [tokens, tokens[::-1]], "decoder": "bgi",
                                   "ensemble_with": "greedy", "deadline_ms": 1})
        took = time.monotonic() - t0
        assert took <= 0.001 + BOUND_S * f, f"answered after {took:.2f}s (x{f:.1f})"
        if r.status_code == 200:
            assert all(len(s["tokens"]) == 250 for s in r.json()["sentences"])
        else:
            assert r.status_code == 504, r.text
            assert r.json()["error"]["code"] == "deadline_exceeded"
        wait_idle(c, 5 * f)


def test_long_text_stops_at_its_deadline(server):
    """256 sentences as one `text`, every one asked to search to its deadline: the job
    stops between sentences by the deadline plus 0.8 s; the worker is free at once."""
    body = {"text": long_text(), "restarts": 10000, "converge": 10000, "deadline_ms": 1000}
    with server.client() as c:
        pids = {w["pid"] for w in c.get("/ready").json()["workers"]["workers"]}
        f = slowdown()               # the answer's second and the worker's stop are CPU
        t0 = time.monotonic()
        r = c.post("/parse", json=body)
        took = time.monotonic() - t0
        assert took <= 1.0 + BOUND_S * f, f"answered after {took:.2f}s (x{f:.1f})"
        assert r.status_code == 504, r.text[:300]
        err = r.json()["error"]
        assert err["code"] == "deadline_exceeded" and err["limit"] == "deadline_ms"
        assert wait_idle(c, 3 * f) <= 1.5 * f
        assert {w["pid"] for w in c.get("/ready").json()["workers"]["workers"]} == pids
        assert c.post("/parse", json={"sentences": ["Free again ."]}).status_code == 200


def hang_up_on_a_long_job(c: httpx.Client, url: str, f: float = 1.0) -> float:
    """Post a long text (8 s of work, deadline 9 s) and leave after 1 s; seconds from
    the hang-up until no worker holds a job any more. That a worker took the job is
    seen while the client still waits: after the hang-up the job may already have
    stopped, as it should (checked after the hang-up, a CI run failed on that)."""
    body = {"text": long_text(64), "restarts": 10000, "converge": 10000, "deadline_ms": 9000}

    def post() -> None:
        try:
            httpx.post(url + "/parse", json=body, timeout=1.0)
        except httpx.TimeoutException:
            pass                                     # the client hangs up here
    t = threading.Thread(target=post)
    t0 = time.monotonic()
    t.start()
    while not busy(c):                               # the job must have been taken
        assert time.monotonic() - t0 < 5, "no worker took the job"
        time.sleep(0.02)
    t.join(10)
    return wait_idle(c, 8 * f)


def test_client_that_hangs_up_stops_its_job_between_sentences(server):
    with server.client() as c:
        f = slowdown()               # a sentence's time, the cancel's way: CPU
        assert hang_up_on_a_long_job(c, server.url, f) <= 2.0 * f
        assert c.post("/parse", json={"sentences": ["Free again ."]}).status_code == 200


def test_client_that_hangs_up_stops_its_stream_job(serve, redis_server, stream_worker):
    """The same with the redis backend: the gateway marks the job cancelled in Redis."""
    rs = redis_server()
    env = {"DEPTREE_REDIS_URL": rs.url, "DEPTREE_CACHE": "false",
           "DEPTREE_BUDGET_CAPS": '{"restarts": 10000, "converge": 10000}'}
    stream_worker(env)
    srv = serve(workers=0, args=["--backend", "redis"], env=env)
    with srv.client() as c:
        f = slowdown()
        assert hang_up_on_a_long_job(c, srv.url, f) <= 2.5 * f
        assert c.post("/parse", json={"sentences": ["Free again ."]}).status_code == 200
