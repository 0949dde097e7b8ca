"""What another Redis client can write into the job stream or the worker keys (issue 20,
defect 5): an entry that is no job is acknowledged, dead-lettered and logged once, and
kills no worker process (before, `XADD deptree:jobs '*' job 1` killed every stream
worker in turn, and a heartbeat that is JSON but no object silently stopped the
gateway's monitor, so /ready went stale). Real `deptree worker` processes, real Redis."""
from __future__ import annotations

import json
import time

import httpx

MALFORMED = [{"job": "1"}, {"job": "[]"}, {"job": "null"}, {"job": '"x"'}, {"job": "{"},
             {"job": "{}"}, {"job": '{"id": 7}'}, {"other": "x"}]




def heartbeats(r) -> dict[str, dict]:
    out = {}
    for name in r.smembers("deptree:workers"):
        raw = r.get(f"deptree:worker:{name}")
        if raw is not None:
            out[name] = json.loads(raw)
    return out


def settled(r) -> bool:
    return r.xlen("deptree:jobs") == 0 and not r.xpending("deptree:jobs", "workers")["pending"]


def test_malformed_stream_entries_are_dead_lettered_and_kill_no_worker(
        redis_server, stream_worker, tmp_path, wait_for):
    rs = redis_server()
    r = rs.client()
    env = {"DEPTREE_REDIS_URL": rs.url, "DEPTREE_CLAIM_IDLE_MS": "300",
           "DEPTREE_MAX_DELIVERIES": "2"}
    # a poison entry already delivered three times to a consumer that died: the worker
    # reclaims it and, past max_deliveries, answers it; being no job, it is dead-lettered
    r.xgroup_create("deptree:jobs", "workers", id="0", mkstream=True)
    poison = r.xadd("deptree:jobs", {"job": "1"})
    r.xreadgroup("workers", "ghost:1", {"deptree:jobs": ">"}, count=1)
    for _ in range(2):
        r.xclaim("deptree:jobs", "workers", "ghost:1", 0, [poison])
    worker = stream_worker(env)
    beat = wait_for(lambda: heartbeats(r), 180, "the worker's heartbeat")
    (name, info), = beat.items()
    wait_for(lambda: settled(r), 30, "the reclaimed poison entry handled")

    for fields in MALFORMED:
        r.xadd("deptree:jobs", fields)
    # a job object whose content is wrong is no dead letter: it is answered with an error
    r.xadd("deptree:jobs", {"job": json.dumps({"id": "half-a-job"})})
    wait_for(lambda: settled(r), 30, "every entry acknowledged")
    reply = json.loads(wait_for(lambda: r.lpop("deptree:reply:half-a-job"), 10, "a reply"))
    assert reply["ok"] is False and reply["error"]["code"]

    dead = r.xrange("deptree:dead")
    assert len(dead) == len(MALFORMED) + 1, dead
    assert {d[1]["entry"] for d in dead} >= {poison}
    assert all(d[1]["reason"] for d in dead)
    time.sleep(1.0)                    # a crashed worker would be replaced by now
    assert worker.poll() is None
    assert heartbeats(r)[name]["pid"] == info["pid"], "the worker process was replaced"
    log = (tmp_path / "worker0.log").read_text()
    assert "exited with" not in log and "Traceback" not in log, log[-3000:]
    assert log.count("is no job") == len(MALFORMED) + 1          # each logged once


def test_heartbeat_that_is_no_object_does_not_stop_the_monitor(serve, redis_server,
                                                               stream_worker, wait_for):
    rs = redis_server()
    r = rs.client()
    env = {"DEPTREE_REDIS_URL": rs.url, "DEPTREE_CACHE": "false"}
    stream_worker(env)
    srv = serve(workers=0, args=["--backend", "redis"], env=env)
    r.set("deptree:worker:ghost", "[]")
    r.sadd("deptree:workers", "ghost")
    r.set("deptree:worker:ghost2", "not json")
    r.sadd("deptree:workers", "ghost2")
    r.hset("deptree:models", "junk", "[1, 2]")
    time.sleep(2.5)                    # a few monitor rounds over the forged keys

    def served(c: httpx.Client) -> int:
        return sum(w.get("served", 0) for w in c.get("/ready").json()["workers"]["workers"])

    with srv.client() as c:
        before = served(c)
        for i in range(3):
            assert c.post("/parse", json={"sentences": [f"Still served {i} ."]}
                          ).status_code == 200
        # the monitor still reads the heartbeats: the worker's count moves on
        wait_for(lambda: served(c) >= before + 3, 10, "/ready shows the new jobs")
        names = [w["name"] for w in c.get("/ready").json()["workers"]["workers"]]
        assert len(names) == 1 and not names[0].startswith("ghost"), names
        assert set(c.get("/models").json()["models"]) == {"en_ewt"}
    log = srv.tail(400)
    assert "Traceback" not in log
    assert log.count("ignoring the heartbeat of worker 'ghost'") == 1     # logged once
