"""GET /metrics exposes the issue's metrics with non-zero values after parsing."""
from __future__ import annotations

import re
import uuid


def sample(text: str, name: str, **labels: str) -> float:
    """Sum of the samples of `name` whose labels include `labels`."""
    total, found = 0.0, False
    for line in text.splitlines():
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$", line)
        if not m or m.group(1) != name:
            continue
        got = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
        if all(got.get(k) == v for k, v in labels.items()):
            total += float(m.group(3))
            found = True
    assert found, f"no sample {name} {labels}"
    return total


def test_metrics_after_parsing(server):
    with server.client() as c:
        sent = f"The metric cat {uuid.uuid4().hex[:6]} sat ."
        for decoder in ("greedy", "mst"):
            assert c.post("/parse", json={"sentences": [sent, ["A", "b"]], "tagger": "fast",
                                          "decoder": decoder}).status_code == 200
        c.post("/parse", json={"sentences": [sent], "tagger": "fast"})  # a cache hit
        c.post("/parse", json={"sentences": []})                      # an error
        info = c.get("/models").json()["models"]["en_ewt"]
        taggers, arcs = info["taggers"], "neural" in info["decoders"]["mst"]["fields"]
        assert info["graph"] == {"order": 3, "tensor_rank": 0,     # the parts it scores
                                 "global_features": False}
        if "accurate" in taggers:
            assert c.post("/parse", json={"sentences": [sent], "decoder": "mst",
                                          "tagger": "accurate"}).status_code == 200
        text = c.get("/metrics").text
    md = {"model": "en_ewt", "decoder": "greedy"}
    assert sample(text, "deptree_decode_seconds_count", **md) > 0
    assert sample(text, "deptree_decode_seconds_sum", **md) > 0
    assert sample(text, "deptree_seconds_per_token_count", **md) > 0
    assert sample(text, "deptree_seconds_per_token_count", model="en_ewt", decoder="mst") > 0
    assert sample(text, "deptree_restarts_used_count", **md) > 0
    # raw strings were tagged, token lists too: two sentences a request, fast tagger
    assert sample(text, "deptree_tag_seconds_per_token_count", model="en_ewt",
                  tagger="fast") >= 4
    assert sample(text, "deptree_tag_seconds_per_token_sum", model="en_ewt", tagger="fast") > 0
    if "accurate" in taggers:
        assert sample(text, "deptree_tag_seconds_per_token_count", model="en_ewt",
                      tagger="accurate") >= 1
        if arcs:                   # with the accurate tagger the neural arc scores are on
            assert sample(text, "deptree_arc_seconds_per_token_count", model="en_ewt") >= 1
            assert sample(text, "deptree_arc_seconds_per_token_sum", model="en_ewt") > 0
    assert sample(text, "deptree_tokens_total", **md) >= 2
    assert sample(text, "deptree_sentences_total", **md) >= 2
    assert sample(text, "deptree_cache_hits_total") > 0
    assert sample(text, "deptree_cache_misses_total") > 0
    assert sample(text, "deptree_cache_up") == 1
    assert sample(text, "deptree_workers_up") == 2
    assert sample(text, "deptree_worker_up") >= 2
    assert sample(text, "deptree_worker_rss_bytes") > 0
    assert sample(text, "deptree_worker_requests_served") > 0
    assert sample(text, "deptree_errors_total", type="empty_request") > 0
    assert sample(text, "deptree_request_seconds_count", route="/parse", status="200") > 0
    assert sample(text, "deptree_request_seconds_count", route="/parse", status="422") > 0
    sample(text, "deptree_queue_depth")
    sample(text, "deptree_in_flight")
