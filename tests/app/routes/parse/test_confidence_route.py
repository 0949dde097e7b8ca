"""Per-arc confidence over REST for both decoders that offer it (issue 6)."""
from __future__ import annotations

import uuid

import pytest


@pytest.fixture(scope="module")
def http(server):
    with server.client() as c:
        yield c


@pytest.mark.parametrize("decoder", ["greedy", "sampling"])
def test_confidence_over_rest(http, decoder):
    sent = f"The dog near {uuid.uuid4().hex[:6]} barked at the mailman ."
    r = http.post("/parse", json={"sentences": [sent], "decoder": decoder, "confidence": True,
                                  "seed": 3})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["decoder"] == decoder and body["budget"]["confidence"] is True
    s = body["sentences"][0]
    conf = s["stats"]["confidence"]
    assert len(conf) == len(s["tokens"])
    assert all(0.0 <= c <= 1.0 for c in conf)
    again = http.post("/parse", json={"sentences": [sent], "decoder": decoder,
                                      "confidence": True, "seed": 3}).json()
    assert again["sentences"][0]["cached"] is True
    assert again["sentences"][0]["stats"]["confidence"] == conf


def test_confidence_must_be_boolean(http):
    r = http.post("/parse", json={"sentences": ["A test ."], "decoder": "sampling",
                                  "confidence": "yes"})
    assert r.status_code == 422
    assert "confidence" in r.text


def test_sampling_budget_validated(http):
    r = http.post("/parse", json={"sentences": ["A test ."], "decoder": "sampling",
                                  "samples": -5})
    assert r.status_code == 422 and "samples" in r.text
    r = http.post("/parse", json={"sentences": ["A test ."], "decoder": "sampling",
                                  "restarts": 5})
    assert r.status_code == 422 and "restarts" in r.text


def test_selectional_over_rest(http):
    info = http.get("/models").json()["models"]["en_ewt"]
    if "selectional" not in info["decoders"]:
        pytest.skip("the served model has no transition parser")
    sent = f"The committee near {uuid.uuid4().hex[:6]} approved the plan ."
    r = http.post("/parse", json={"sentences": [sent], "decoder": "selectional", "beam": 16})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["decoder"] == "selectional" and body["budget"]["beam"] == 16
    s = body["sentences"][0]
    heads = [t["head"] for t in s["tokens"]]
    assert sum(h == 0 for h in heads) == 1
    assert s["stats"]["transitions"] > 0 and "branches" in s["stats"]
    again = http.post("/parse", json={"sentences": [sent], "decoder": "selectional",
                                      "beam": 16}).json()
    assert again["sentences"][0]["cached"] is True
    r = http.post("/parse", json={"sentences": [sent], "decoder": "selectional", "beam": 0})
    assert r.status_code == 422 and "beam" in r.text
    r = http.post("/parse", json={"sentences": [sent], "decoder": "selectional",
                                  "restarts": 5})
    assert r.status_code == 422 and "restarts" in r.text
