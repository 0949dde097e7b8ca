"""Connections that never send a request (issue 20, defect 3): uvicorn counted them
against `limit_concurrency` and never timed them out, so with
DEPTREE_MAX_CONNECTIONS=5 five idle sockets made even GET /health answer 503 for as long
as they stayed open. Now the limit counts requests, and a connection that has not sent
a whole request head within `header_timeout_s` is closed."""
from __future__ import annotations

import resource
import socket
import time

import httpx
import pytest

IDLE = 1000


@pytest.fixture
def fds():
    """Room for IDLE sockets here and in the server started after (it inherits it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 4 * IDLE
    if soft < want:
        if hard != resource.RLIM_INFINITY and hard < want:
            pytest.skip(f"open-files hard limit {hard} < {want}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def address(srv) -> tuple[str, int]:
    host, port = srv.url.removeprefix("http://").split(":")
    return host, int(port)


def test_idle_connections_do_not_lock_out_clients(serve, fds):
    srv = serve(workers=1, env={"DEPTREE_MAX_CONNECTIONS": "5"})
    idle = [socket.create_connection(address(srv)) for _ in range(IDLE)]
    try:
        time.sleep(0.5)                      # all accepted by the server
        with httpx.Client(base_url=srv.url, timeout=10) as c:
            assert c.get("/health").status_code == 200
            r = c.post("/parse", json={"sentences": ["Idle sockets do not count ."]})
            assert r.status_code == 200, r.text
            assert c.get("/ready").status_code == 200
    finally:
        for s in idle:
            s.close()


def test_connection_without_a_request_head_is_closed_after_the_header_timeout(serve):
    srv = serve(workers=1, env={"DEPTREE_HEADER_TIMEOUT_S": "1"})
    silent = socket.create_connection(address(srv))
    trickle = socket.create_connection(address(srv))
    trickle.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")      # never ends its head
    for s in (silent, trickle):
        s.settimeout(15)
    try:
        t0 = time.monotonic()
        assert silent.recv(100) == b"", "an idle connection was answered"
        assert trickle.recv(100) == b"", "a half-sent head was answered"
        assert time.monotonic() - t0 < 15
        # a client that keeps its connection between requests is not cut off
        with httpx.Client(base_url=srv.url, timeout=10) as c:
            for _ in range(3):
                assert c.get("/health").status_code == 200
                time.sleep(0.5)
    finally:
        silent.close()
        trickle.close()


def test_more_requests_than_the_limit_get_503_with_the_error_body(serve):
    """What the limit still does: requests being received (a slow body) count."""
    srv = serve(workers=1, env={"DEPTREE_MAX_CONNECTIONS": "3"})
    slow = []
    for _ in range(3):
        s = socket.create_connection(address(srv))
        s.sendall(b"POST /parse HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 100\r\n\r\n{\"sentences\"")
        slow.append(s)
    try:
        time.sleep(0.5)
        r = httpx.get(srv.url + "/health", timeout=10)
        assert r.status_code == 503 and r.headers["retry-after"]
        assert r.json()["error"]["code"] == "overloaded" and r.headers["x-request-id"]
    finally:
        for s in slow:
            s.close()
    t0 = time.monotonic()
    while httpx.get(srv.url + "/health", timeout=10).status_code != 200:
        assert time.monotonic() - t0 < 10
        time.sleep(0.2)
