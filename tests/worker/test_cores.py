"""Each worker process's BLAS threads are its share of the cores (`worker.cores`),
whichever backend starts it.

The local backend shared the cores since issue 61 (defect 1); the redis backend's own
workers did not: each ran an OpenBLAS thread per core, and under the fault tests' load
(tests/reliability/test_faults_redis.py, 40 requests of 8 sentences, mst) a request took
8 to 11 s instead of 0.4 s, a 504 at the 10 s deadline cap in CI on 2026-12-02.
"""
from __future__ import annotations

import os

import httpx
import pytest

from worker.cores import THREAD_VARIABLES, share_cores


def test_each_worker_gets_its_share_of_the_cores(monkeypatch):
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: set(range(8)))

    assert share_cores(2) == 4 and os.environ["OPENBLAS_NUM_THREADS"] == "4"
    monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    assert share_cores(16) == 1 and os.environ["OPENBLAS_NUM_THREADS"] == "1"
    monkeypatch.setenv("OMP_NUM_THREADS", "3")          # what the environment says stands
    share_cores(2)
    assert os.environ["OMP_NUM_THREADS"] == "3"


def environ_of(pid: int) -> dict[str, str]:
    raw = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
    return dict(item.decode(errors="replace").split("=", 1) for item in raw if b"=" in item)


@pytest.mark.skipif(not os.path.exists("/proc/self/environ"), reason="needs Linux /proc")
def test_the_redis_backends_workers_get_their_share(serve, redis_server, monkeypatch):
    for name in THREAD_VARIABLES:           # what the test's own environment says would stand
        monkeypatch.delenv(name, raising=False)
    rs = redis_server()
    srv = serve(workers=2, args=["--backend", "redis"], env={"DEPTREE_REDIS_URL": rs.url})
    share = str(max(1, len(os.sched_getaffinity(0)) // 2))
    pids = [w["pid"] for w in httpx.get(srv.url + "/ready").json()["workers"]["workers"]]
    assert len(pids) == 2
    for pid in pids:
        env = environ_of(pid)
        assert {name: env.get(name) for name in THREAD_VARIABLES} == \
            dict.fromkeys(THREAD_VARIABLES, share)
