"""Optional API key on /parse and /process; request ids on every answer (issue 8, part 4)."""
from __future__ import annotations

import socket
import time
import uuid

import httpx
import pytest

API_KEY = "s3cret-api-key-0123"            # keys are at least 16 characters


def test_api_key_and_request_ids(serve):
    keyed = serve(workers=1, env={"DEPTREE_API_KEY": API_KEY})
    with keyed.client() as c:
        body = {"sentences": [["A", "keyed", "test", "."]], "decoder": "mst"}
        r = c.post("/parse", json=body)
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
        assert c.post("/parse", json=body, headers={"X-API-Key": "wrong"}).status_code == 401
        assert c.post("/parse", json=body, headers={"X-API-Key": API_KEY}).status_code == 200
        r = c.post("/parse", json=body, headers={"Authorization": f"Bearer {API_KEY}"})
        assert r.status_code == 200
        r = c.post("/process", data={"data": "A keyed test .", "tokenizer": ""})
        assert r.status_code == 401
        r = c.post("/process", data={"data": "A keyed test .", "tokenizer": ""},
                   headers={"X-API-Key": API_KEY})
        assert r.status_code == 200
        # operations endpoints stay open
        assert c.get("/health").status_code == 200
        assert c.get("/models").status_code == 200

        # request ids: the client's when well-formed, else a new one
        r = c.get("/health", headers={"X-Request-ID": "abc-123"})
        assert r.headers["x-request-id"] == "abc-123"
        r = c.get("/health", headers={"X-Request-ID": ("bad id with spaces " * 10).strip()})
        rid = r.headers["x-request-id"]
        assert rid != "bad id" and len(rid) == 32
        assert c.post("/parse", json={}).headers.get("x-request-id")


ADMIN = "an-admin-key-0123456789"


def test_admin_actions_need_the_admin_key(serve):
    srv = serve(workers=1, env={"DEPTREE_API_KEY": API_KEY, "DEPTREE_ADMIN_KEY": ADMIN})
    api = {"X-API-Key": API_KEY}
    body = {"sentences": [["Flush", "me", "."]], "decoder": "mst"}
    with srv.client() as c:
        assert c.post("/parse", json=body, headers=api).json()["sentences"][0]["cached"] is False
        assert c.post("/parse", json=body, headers=api).json()["sentences"][0]["cached"] is True
        # the API key is not the admin key; a wrong or missing admin key is 401
        for headers in ({}, {"X-Admin-Key": API_KEY}, {"X-Admin-Key": ADMIN[:-1]}, api):
            r = c.post("/admin/cache/flush", headers=headers)
            assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
        r = c.post("/admin/cache/flush", headers={"X-Admin-Key": ADMIN})
        assert r.status_code == 200 and r.json() == {"flushed": 1, "backend": "memory"}
        assert c.post("/parse", json=body, headers=api).json()["sentences"][0]["cached"] is False

        # reload: fresh workers take over, requests keep being answered meanwhile
        before = {w["pid"] for w in c.get("/ready").json()["workers"]["workers"]}
        r = c.post("/admin/workers/reload", headers={"X-Admin-Key": ADMIN})
        assert r.status_code == 202 and r.json() == {"reloading": 1}
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            r = c.post("/parse", json={**body, "decoder": "greedy"}, headers=api)
            assert r.status_code == 200, r.text
            now = {w["pid"] for w in c.get("/ready").json()["workers"]["workers"]
                   if w["state"] in ("idle", "busy")}
            if now and not now & before:
                break
            time.sleep(0.5)
        else:
            raise AssertionError(f"workers not replaced: {before} -> {now}\n{srv.tail()}")


def test_admin_actions_are_refused_without_an_admin_key(serve):
    srv = serve(workers=1)
    with srv.client() as c:
        r = c.post("/admin/cache/flush", headers={"X-Admin-Key": "anything-at-all-long"})
        assert r.status_code == 403 and r.json()["error"]["code"] == "admin_disabled"
        assert c.post("/admin/workers/reload").status_code == 403


def test_admin_key_must_differ_from_the_api_key():
    from app.core.config import Settings

    with pytest.raises(ValueError, match="differ"):
        Settings(api_key=ADMIN, admin_key=ADMIN)
    with pytest.raises(ValueError, match="16"):
        Settings(admin_key="short")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_metrics_on_a_separate_port_and_bounded_log_lines(serve):
    mport = free_port()
    srv = serve(workers=1, args=["--metrics-port", str(mport)])
    with srv.client() as c:
        assert c.post("/parse", json={"sentences": [["Count", "me"]]}).status_code == 200
        assert c.get("/metrics").status_code == 404
        # a hostile path and request id: the log gets one bounded, escaped line
        c.get("/" + "x" * 5000 + "%0AFAKE%20ERROR%20line", headers={"X-Request-ID": "r-77"})
    text = httpx.get(f"http://127.0.0.1:{mport}/metrics", timeout=10).text
    assert "deptree_tokens_total" in text and "deptree_workers_up" in text
    lines = srv.log.read_text(errors="replace").splitlines()
    hit = [ln for ln in lines if "[r-77]" in ln]
    assert len(hit) == 1 and len(hit[0]) < 2300 and "more chars]" in hit[0]
    assert not any(ln.startswith("FAKE") for ln in lines)
    assert any("POST /parse" in ln and "[" in ln for ln in lines)


def test_slow_clients_cannot_take_every_connection(serve):
    """Clients that trickle a body hold connections; beyond max_connections new ones get
    503 at once (not a hang), and once they leave the service answers again."""
    import socket as so

    srv = serve(workers=1, env={"DEPTREE_MAX_CONNECTIONS": "4"})
    host, port = srv.url.removeprefix("http://").split(":")
    slow = []
    for _ in range(4):
        s = so.create_connection((host, int(port)))
        s.sendall(b"POST /parse HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 100\r\n\r\n{\"sentences\"")
        slow.append(s)
    time.sleep(0.5)
    r = httpx.post(srv.url + "/parse", json={"sentences": [["Hi"]]}, timeout=10)
    assert r.status_code == 503
    for s in slow:
        s.close()
    deadline = time.monotonic() + 10
    while True:
        r = httpx.post(srv.url + "/parse", json={"sentences": [["Hi"]]}, timeout=10)
        if r.status_code == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert r.status_code == 200


def test_access_log_has_no_query_string(server, wait_for):
    """The access log names the path without its query string: /process takes `data` from
    the query, so a user's text would land in the log (issue 61, defect 8)."""
    secret = f"hunter{uuid.uuid4().hex[:8]}"
    with server.client() as c:
        r = c.get(f"/process?data=password+{secret}&tokenizer=",
                  headers={"X-Request-ID": "no-query-1"})
        assert r.status_code == 200, r.text
        r = c.post(f"/process?data={secret}", data={"tokenizer": ""},
                   headers={"X-Request-ID": "no-query-2"})
        assert r.status_code == 200, r.text

    def logged():
        lines = server.log.read_text(errors="replace").splitlines()
        return [ln for ln in lines if "[no-query-" in ln and "HTTP/1.1" in ln]

    hits = wait_for(lambda: len(logged()) >= 2 and logged(), 10, "both access log lines")
    assert any('"GET /process HTTP/1.1" 200' in ln for ln in hits), hits
    assert any('"POST /process HTTP/1.1" 200' in ln for ln in hits), hits
    assert secret not in server.log.read_text(errors="replace")
