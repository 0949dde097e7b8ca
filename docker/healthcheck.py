"""Container healthcheck: `gateway` asks GET /ready; `worker` looks for this host's heartbeat.

Exit 0 when healthy, 1 otherwise (Docker's HEALTHCHECK contract). The gateway is
healthy when /ready answers 200 (a worker is up with its models warm); a redis-backend
worker when one of its processes (named `<hostname>:<pid>`) has a live heartbeat key.
"""
from __future__ import annotations

import os
import socket
import sys
import urllib.request


def gateway() -> bool:
    port = os.environ.get("DEPTREE_PORT", "8000")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/ready", timeout=4) as r:
            return r.status == 200
    except OSError:          # URLError / HTTPError (503) / connection refused
        return False


def worker() -> bool:
    import redis

    from worker.stream import keys

    k = keys(os.environ.get("DEPTREE_STREAM", "deptree"))
    r = redis.Redis.from_url(os.environ["DEPTREE_REDIS_URL"], socket_timeout=3,
                             decode_responses=True)
    mine = [n for n in r.smembers(k["workers"]) if n.startswith(socket.gethostname() + ":")]
    return any(r.exists(k["worker"] + n) for n in mine)


if __name__ == "__main__":
    role = sys.argv[1] if len(sys.argv) > 1 else "gateway"
    try:
        ok = worker() if role == "worker" else gateway()
    except Exception as exc:  # noqa: BLE001 - any failure is "unhealthy"
        sys.stderr.write(f"healthcheck {role}: {exc}\n")
        ok = False
    sys.exit(0 if ok else 1)
