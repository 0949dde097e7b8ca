"""A `deptree worker` killed with SIGKILL takes its decoding process (and the
multiprocessing resource tracker) along (issue 20, defect 9): before, both lived on
with PPID 1 and kept taking jobs, so a supervisor that restarted the worker ran two.
Real `deptree worker`, real Redis."""
from __future__ import annotations

import json
import os
import signal
import time

from procs import alive, children


def test_sigkill_of_deptree_worker_takes_its_decoding_process_along(redis_server,
                                                                    stream_worker):
    rs = redis_server()
    r = rs.client()
    worker = stream_worker({"DEPTREE_REDIS_URL": rs.url})
    t0 = time.monotonic()
    while not r.smembers("deptree:workers"):
        assert time.monotonic() - t0 < 180 and worker.poll() is None, "no heartbeat"
        time.sleep(0.2)
    name, = r.smembers("deptree:workers")
    decoder_pid = json.loads(r.get(f"deptree:worker:{name}"))["pid"]
    kids = children(worker.pid)
    assert decoder_pid in kids, (decoder_pid, kids)

    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(10)
    t0 = time.monotonic()
    while any(alive(p) for p in kids) and time.monotonic() - t0 < 20:
        time.sleep(0.2)
    left = [p for p in kids if alive(p)]
    for p in left:                     # a failing run leaves nothing behind either
        os.kill(p, signal.SIGKILL)
    assert not left, f"processes of the killed worker still run: {left}"
    # the decoding process left on its way out: nothing consumes the stream any more
    assert not r.smembers("deptree:workers")
    r.xadd("deptree:jobs", {"job": json.dumps({"id": "nobody", "model": "en_ewt"})})
    time.sleep(2.0)
    assert r.xlen("deptree:jobs") == 1
