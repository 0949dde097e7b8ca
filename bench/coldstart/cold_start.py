"""Cold start: seconds from `deptree serve` to /ready on a fresh install (empty numba cache).

For each source tree given (default: this checkout), each run:
- starts `python -m app.serve_cli serve --workers N --no-cache` from that tree with an
  empty NUMBA_CACHE_DIR (what a fresh install has), polls GET /ready every 0.1 s and
  records when it first answers 200 (`ready_s`) and when every decoder of every model
  is warm (`all_warm_s`; a tree whose /ready lists no `warm` is all warm when ready),
  then stops it (SIGTERM) and records the CPU seconds of the whole process tree
  (`cpu_s`: gateway, workers and their helpers, from getrusage of the children) and,
  where the worker logs it, its own CPU seconds when it was ready (`worker_cpu_ready_s`:
  the critical path, which a loaded machine stretches in wall time but hardly in CPU);
- starts it again on the now warm cache (`warm_ready_s`);
- times `echo "The cat sat on the mat." | python -m deptree.cli parse --input text` on
  another empty cache (`parse_s`, `parse_cpu_s`).
Runs alternate between trees, so both see the same machine load.

Usage (from the repository root):
    python bench/coldstart/cold_start.py [--src DIR ...] [--runs 1] [--workers 1]
Prints one JSON object: {tree: [run, ...]} plus the machine's load averages.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time

import httpx

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _env(src: str, cache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
    env.update(NUMBA_CACHE_DIR=cache, PYTHONPATH=src, PYTHONDONTWRITEBYTECODE="1")
    return env


def serve_once(src: str, cache: str, workers: int, timeout: float, log) -> dict:
    """Start the service on `cache`; seconds to ready and to all warm; CPU of the tree."""
    port = _port()
    cpu0 = _children_cpu()
    out = tempfile.TemporaryFile()
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "app.serve_cli", "serve", "--port", str(port),
                             "--workers", str(workers), "--no-cache"], cwd=src,
                            env=_env(src, cache), stdout=out, stderr=subprocess.STDOUT)
    ready = warm = None
    body: dict = {}
    at_ready: dict = {}                  # /ready's body when it first answered 200
    try:
        while time.monotonic() - t0 < timeout and warm is None:
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited with {proc.returncode}")
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/ready", timeout=2)
                body = r.json()
            except (httpx.HTTPError, ValueError):
                r = None
            now = time.monotonic() - t0
            if r is not None and r.status_code == 200:
                if ready is None:
                    ready, at_ready = now, body
                if all(set(m.get("warm", m["decoders"])) >= set(m["decoders"])
                       for m in body.get("models", {}).values()):
                    warm = now
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        out.seek(0)
        text = out.read().decode(errors="replace")
        out.close()
        log.write(text.encode())
    worker_cpu = re.search(r"ready: .* ([0-9.]+) s of CPU", text)
    return {"ready_s": _round(ready), "all_warm_s": _round(warm),
            "cpu_s": _round(_children_cpu() - cpu0),
            "worker_cpu_ready_s": float(worker_cpu.group(1)) if worker_cpu else None,
            "warm_at_ready": {n: m.get("warm", m["decoders"])
                              for n, m in at_ready.get("models", {}).items()} if ready else None}


def parse_once(src: str, cache: str) -> dict:
    cpu0 = _children_cpu()
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "deptree.cli", "parse", "--input", "text"], cwd=src,
                         env=_env(src, cache), input="The cat sat on the mat.\n", text=True,
                         capture_output=True, check=True)
    return {"parse_s": _round(time.monotonic() - t0), "parse_cpu_s": _round(_children_cpu() - cpu0),
            "parse_ok": out.stdout.count("\n") >= 7}


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", action="append", help="source tree (repeatable; default: here)")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--log", default=os.devnull, help="append the servers' output here")
    args = ap.parse_args()
    srcs = [os.path.abspath(s) for s in (args.src or [ROOT])]
    out: dict = {"loadavg_before": os.getloadavg()}
    with open(args.log, "ab") as log:
        for run in range(args.runs):
            for src in srcs:
                with tempfile.TemporaryDirectory(prefix="deptree-cold-") as cache:
                    res = serve_once(src, cache, args.workers, args.timeout, log)
                    res["warm_ready_s"] = serve_once(src, cache, args.workers, args.timeout,
                                                     log)["ready_s"]
                with tempfile.TemporaryDirectory(prefix="deptree-cold-") as cache:
                    res.update(parse_once(src, cache))
                res["run"] = run
                out.setdefault(src, []).append(res)
                print(json.dumps({src: res}), file=sys.stderr, flush=True)
    out["loadavg_after"] = os.getloadavg()
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
