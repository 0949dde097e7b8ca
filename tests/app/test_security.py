"""Optional API key on /parse and /process; request ids on every answer (issue 8, part 4)."""
from __future__ import annotations


def test_api_key_and_request_ids(serve):
    keyed = serve(workers=1, env={"DEPTREE_API_KEY": "s3cret-key"})
    with keyed.client() as c:
        body = {"sentences": [["A", "keyed", "test", "."]], "decoder": "mst"}
        r = c.post("/parse", json=body)
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
        assert c.post("/parse", json=body, headers={"X-API-Key": "wrong"}).status_code == 401
        assert c.post("/parse", json=body, headers={"X-API-Key": "s3cret-key"}).status_code == 200
        r = c.post("/parse", json=body, headers={"Authorization": "Bearer s3cret-key"})
        assert r.status_code == 200
        r = c.post("/process", data={"data": "A keyed test .", "tokenizer": ""})
        assert r.status_code == 401
        r = c.post("/process", data={"data": "A keyed test .", "tokenizer": ""},
                   headers={"X-API-Key": "s3cret-key"})
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
