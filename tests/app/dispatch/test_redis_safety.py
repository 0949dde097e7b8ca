"""No client string reaches a Redis command as anything but an opaque value (issue 8,
part 4): cache keys are SHA-256 digests, stream entries are JSON in one field, reply
keys carry gateway-made ids; text shaped like RESP commands or glob patterns is
parsed and cached like any other text and creates no key of its own."""
from __future__ import annotations

import re

KEY = re.compile(r"deptree:(cache:[0-9a-f]{64}|jobs|workers|models|worker:[\w.:-]+"
                 r"|reply:[0-9a-f]{32})")
HOSTILE = [
    ["SET", "pwned", "1"],
    ["*3\r\n$3\r\nSET\r\n$5\r\npwned\r\n$1\r\n1\r\n"],
    ["deptree:cache:*", "KEYS", "*", "FLUSHALL"],
    ["\"}", "{\"job\":", "EVAL", "return", "redis.call('FLUSHALL')", "0"],
    ["a]b[c", "?", "\\", "%s%n", "${jndi:ldap://x}"],
]


def test_hostile_text_never_becomes_a_redis_command(serve, redis_server):
    rs = redis_server()
    srv = serve(workers=1, args=["--backend", "redis"],
                env={"DEPTREE_REDIS_URL": rs.url})
    r = rs.client()
    r.set("sentinel", "kept")
    with srv.client() as c:
        for words in HOSTILE:
            body = {"sentences": [words], "decoder": "mst"}
            first = c.post("/parse", json=body)
            assert first.status_code in (200, 422), first.text
            if first.status_code == 200:
                toks = first.json()["sentences"][0]["tokens"]
                assert [t["form"] for t in toks] == words
                assert c.post("/parse", json=body).json()["sentences"][0]["cached"] is True
        text = "SET pwned 1\r\nFLUSHALL\r\n*1\r\n$8\r\nFLUSHALL"
        assert c.post("/parse", json={"text": text}).status_code == 200
    keys = r.keys("*")
    assert r.get("sentinel") == "kept" and "pwned" not in keys
    assert all(k == "sentinel" or KEY.fullmatch(k) for k in keys), keys
