"""Fixtures of the hostile-input tests: the running service, a keep-alive client, the
answer contract every response must keep, and the check that the service survived.

All of tests/fuzz talks to the session `server` (real uvicorn and two worker processes
over loopback, tests/conftest.py). The client keeps its connection alive on purpose:
an answer after which uvicorn drops the connection would lose the next request, and
shows up here as a transport error.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import httpx
import pytest

from app.errors import CODES
from app.schemas import ErrorResponse, ParseResponse, ProcessResponse

ERROR_KEYS = {"code", "message", "limit", "value", "got"}


def internal_errors(http: httpx.Client) -> float:
    """How many `internal_error` answers the gateway has counted (its /metrics)."""
    for line in http.get("/metrics").text.splitlines():
        if line.startswith('deptree_errors_total{type="internal_error"}'):
            return float(line.split()[-1])
    return 0.0


DEADLINE_CAP_S = 10.0      # the session server's deadline_ms cap (the default)


def time_bound(r: httpx.Response) -> float:
    """How long the request may take (issue 20): its deadline plus one second, its JSON
    body's `deadline_ms` or else the server's cap."""
    try:
        body = json.loads(r.request.content)
    except (httpx.RequestNotRead, ValueError, RecursionError):   # 100k nested arrays
        body = None
    ms = body.get("deadline_ms") if isinstance(body, dict) else None
    if isinstance(ms, (int, float)) and not isinstance(ms, bool) and 0 < ms < DEADLINE_CAP_S * 1e3:
        return ms / 1000 + 1.0
    return DEADLINE_CAP_S + 1.0


def check_answer(r: httpx.Response) -> dict | str:
    """The contract: never a 5xx, answered within the request's deadline plus one second,
    every answer has an X-Request-ID; a 2xx is the documented model (or CoNLL-U text); a
    4xx is the error body with a catalogue code whose status is the one answered.
    Returns the body (the error for a 4xx)."""
    assert r.status_code < 500, (r.status_code, r.text[:500])
    took, bound = r.elapsed.total_seconds(), time_bound(r)
    assert took <= bound, f"answered after {took:.2f}s > {bound:g}s: {r.request.url}"
    assert r.headers.get("x-request-id"), dict(r.headers)
    ctype = r.headers.get("content-type", "")
    if r.status_code == 200 and ctype.startswith("text/x-conllu"):
        return r.text
    assert ctype.startswith("application/json"), (r.status_code, ctype, r.text[:300])
    body = json.loads(r.content.decode("utf-8"))          # strict: valid UTF-8 JSON
    if r.status_code >= 400:
        assert set(body) == {"error"} and {"code", "message"} <= set(body["error"]) \
            <= ERROR_KEYS, body
        ErrorResponse.model_validate(body)
        err = body["error"]
        assert CODES.get(err["code"]) == r.status_code, (r.status_code, err)
        return err
    path = r.request.url.path
    if path == "/parse":
        ParseResponse.model_validate(body)
    elif path == "/process":
        ProcessResponse.model_validate(body)
    return body


def expect(r: httpx.Response, status: int, code: str | None = None) -> dict | str:
    """check_answer plus the status (and error code) this input must get."""
    body = check_answer(r)
    assert r.status_code == status, (r.status_code, r.text[:300])
    if code is not None:
        assert body["code"] == code, body
    return body


@pytest.fixture(scope="session")
def fuzz_http(server):
    """One keep-alive client for all of tests/fuzz (60 s per request)."""
    with server.client(timeout=60) as c:
        yield c


@dataclass
class Survivor:
    """What must hold after the fuzzing: ready, the same worker processes (none crashed
    or was replaced), no internal error answered, and a normal parse still works."""

    pids: set[int]
    internal: float

    def check(self, http: httpx.Client) -> None:
        ready = http.get("/ready")
        assert ready.status_code == 200 and ready.json()["ready"], ready.text
        workers = ready.json()["workers"]
        pids = {w["pid"] for w in workers["workers"] if w["state"] in ("idle", "busy")}
        assert pids == self.pids, f"worker processes changed: {self.pids} -> {pids}"
        r = http.post("/parse", json={"sentences": ["The service still parses ."],
                                      "decoder": "greedy", "restarts": 5, "seed": 1})
        body = expect(r, 200)
        assert [t["form"] for t in body["sentences"][0]["tokens"]][-1] == "."
        assert internal_errors(http) == self.internal, "an internal error was answered"


@pytest.fixture(scope="module", autouse=True)
def survivor(server, fuzz_http) -> Survivor:
    """The worker pids and internal-error count before a test module's first test (both
    workers up); a module's last test checks them with `survivor.check`."""
    ready = server.wait_ready(workers=2)
    return Survivor({w["pid"] for w in ready["workers"]["workers"]
                     if w["state"] in ("idle", "busy")}, internal_errors(fuzz_http))


@pytest.fixture(scope="session")
def check():
    """check_answer, as a fixture (hypothesis tests take no function-scoped ones)."""
    return check_answer


@pytest.fixture(scope="session")
def expect_answer():
    return expect
