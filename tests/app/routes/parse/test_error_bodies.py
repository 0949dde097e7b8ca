"""Error bodies stay small whatever the client sent: quoted strings are cut."""
from __future__ import annotations

from app.errors import MAX_VALUE, ServiceError


def test_quoted_values_are_cut():
    big = "m" * 1_000_000
    body = ServiceError("unknown_model", f"unknown model {big!r}", value=big, got=big).body()
    err = body["error"]
    assert len(err["message"]) < 1100 and err["message"].endswith("more characters)")
    assert err["value"].startswith("m" * MAX_VALUE) and len(err["value"]) < MAX_VALUE + 40
    assert ServiceError("x", "short", value=3).body()["error"]["value"] == 3


def test_a_huge_model_name_gets_a_small_error(server):
    with server.client() as c:
        r = c.post("/parse", json={"sentences": [["A", "b"]], "model": "x" * 1_000_000})
    assert r.status_code == 422 and r.json()["error"]["code"] == "unknown_model"
    assert len(r.content) < 5000
