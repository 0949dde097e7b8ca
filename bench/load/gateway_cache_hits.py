"""Cache-hit throughput of `deptree serve --gateways N` (issue 61, defect 7).

For each N of --gateways (default 1 2 4) it starts a redis-server on a free loopback
port and `python -m app.serve_cli serve --backend redis --gateways N --workers 1`,
waits for /ready, parses --sentences distinct en_ewt-like sentences once (so every
later request is a cache hit: checked, `cached` true), then drives POST /parse with
them for --seconds s from `wrk` (Debian's wrk, one thread, --connections keep-alive
connections, a Lua script cycling through the bodies) and reads its requests/s, p50,
p99 and non-2xx count. `--local` adds a row for one gateway on the local backend (its
in-process cache, no Redis: the default `deptree serve`). Everything is on 127.0.0.1
and stops by itself.

Usage (repository root; `apt-get install wrk redis-server`):
    python bench/load/gateway_cache_hits.py [--gateways 1 2 4] [--seconds 20]
Prints one JSON object per N.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import httpx

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WORDS = ["the", "old", "dogs", "near", "green", "houses", "barked", "at", "many", "people",
         "while", "a", "cat", "slept", "on", "warm", "stones", "by", "river"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sentences(n: int) -> list[str]:
    return [" ".join(WORDS[(i + k) % len(WORDS)] for k in range(8)) + f" {i} ." for i in range(n)]


def wait_ready(url: str, proc: subprocess.Popen, timeout: float = 600) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if proc.poll() is not None:
            raise RuntimeError(f"deptree serve exited {proc.returncode}")
        try:
            r = httpx.get(url + "/ready", timeout=5)
            if r.status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError("not ready")


LUA = """
local bodies = {%s}
local i = 0
request = function()
  i = i %% #bodies + 1
  return wrk.format("POST", "/parse", {["Content-Type"] = "application/json"}, bodies[i])
end
"""


def run_wrk(url: str, bodies: list[str], seconds: int, connections: int) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(LUA % ", ".join(json.dumps(b) for b in bodies))
        script = f.name
    try:
        out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency",
                              "--timeout", "10s", "-s", script, url], capture_output=True,
                             text=True, timeout=seconds + 60, check=True).stdout
    finally:
        os.unlink(script)

    def latency(pct: str) -> float:
        m = re.search(rf"^\s*{pct}%\s+([\d.]+)(us|ms|s)\s*$", out, re.MULTILINE)
        return float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    total = int(re.search(r"(\d+) requests in", out).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    return {"requests_per_s": rps, "requests": total, "p50_ms": latency("50"),
            "p99_ms": latency("99"), "non_2xx": int(bad.group(1)) if bad else 0,
            "socket_errors": errors.group(1) if errors else None}


def measure(gateways: int, args, backend: str = "redis") -> dict:
    rport, port = free_port(), free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(rport), "--bind", "127.0.0.1",
                              "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
    flags = ["--backend", "redis", "--redis-url", f"redis://127.0.0.1:{rport}/0",
             "--gateways", str(gateways)] if backend == "redis" else []
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "DEPTREE_MODELS": "en_ewt"}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    log = open(os.path.join(tempfile.gettempdir(), f"gateway-bench-{gateways}.log"), "wb")
    serve = subprocess.Popen(
        [sys.executable, "-m", "app.serve_cli", "serve", "--port", str(port), "--workers", "1",
         *flags], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_ready(url, serve)
        bodies = [json.dumps({"sentences": [s], "decoder": "mst"})
                  for s in sentences(args.sentences)]
        with httpx.Client(base_url=url, timeout=120) as c:
            for b in bodies:             # parse each once; then each must be a hit
                for _ in range(2):
                    r = c.post("/parse", content=b, headers={"content-type": "application/json"})
                    r.raise_for_status()
                assert r.json()["sentences"][0]["cached"] is True
        out = run_wrk(url, bodies, args.seconds, args.connections)
        return {"gateways": gateways, "backend": backend, "connections": args.connections,
                "seconds": args.seconds, **out}
    finally:
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(60)
        except subprocess.TimeoutExpired:
            serve.kill()
        redis.kill()
        redis.wait(10)
        log.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gateways", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--sentences", type=int, default=20)
    ap.add_argument("--local", action="store_true",
                    help="also one gateway on the local backend (in-process cache)")
    args = ap.parse_args()
    for tool in ("wrk", "redis-server"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not installed (apt-get install {tool})")
    if args.local:
        print(json.dumps(measure(1, args, backend="local")), flush=True)
    for n in args.gateways:
        print(json.dumps(measure(n, args)), flush=True)


if __name__ == "__main__":
    main()
