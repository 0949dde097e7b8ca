"""The README's first request on a fresh install: seconds from `deptree serve` to its 200.

Each run starts `python -m app.serve_cli serve --workers N` (the README's `deptree
serve`: one worker) on an empty NUMBA_CACHE_DIR and array cache (what a fresh install has), with
`--busy K` processes running `yes > /dev/null` beside it (issue 61: a machine busy with
other work), and acts as the README's new user: it polls GET /ready until 200, then
sends the README's first curl (greedy, `restarts: 50`, no deadline: the server's cap
applies) again and again until one answers 200. Meanwhile a second client sends, every
half second, a new sentence (never a cache hit) for a decoder that was warm at /ready,
to see whether a request for a warm decoder waits behind a compile. It records every answer's status
and seconds, when /ready first answered 200 and when every decoder was warm, then
stops the server and the busy loops.

Usage (from the repository root):
    python bench/coldstart/first_curl.py [--busy 2] [--runs 1] [--workers 1]
Prints one JSON object per run.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import httpx

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
README_BODY = {"sentences": ["The cat sat on the mat.", ["Pre", "tokenized", "words"]],
               "decoder": "greedy", "restarts": 50}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _post(url: str, body: dict, t0: float, timeout: float) -> dict:
    a = time.monotonic()
    try:
        r = httpx.post(url + "/parse", json=body, timeout=timeout)
        status = r.status_code
        code = None if status == 200 else r.json().get("error", {}).get("code")
    except (httpx.HTTPError, ValueError) as exc:
        status, code = None, type(exc).__name__
    b = time.monotonic()
    return {"sent_s": round(a - t0, 1), "status": status, "code": code,
            "took_s": round(b - a, 2), "answered_s": round(b - t0, 1)}


def _machine() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        return next(line.split(":", 1)[1].strip() for line in out.splitlines()
                    if line.startswith("Model name")) + f", {os.cpu_count()} cores"
    except (OSError, StopIteration):
        return platform.machine()


def run_once(workers: int, timeout: float, log) -> dict:
    port = _port()
    url = f"http://127.0.0.1:{port}"
    cache = tempfile.mkdtemp(prefix="deptree-cold-")
    env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
    # a fresh install has no compiled kernels and no decompressed model arrays either
    env.update(NUMBA_CACHE_DIR=cache, DEPTREE_ARRAY_CACHE=os.path.join(cache, "arrays"),
               PYTHONDONTWRITEBYTECODE="1")
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "app.serve_cli", "serve", "--port", str(port),
                             "--workers", str(workers)], cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    out: dict = {"ready_s": None, "first_200_s": None, "all_warm_s": None,
                 "readme": [], "warm_decoder": [], "warm_at_ready": None}
    stop = threading.Event()

    def warm_client() -> None:          # a second user, asking for a warm decoder
        (warm,) = list(out["warm_at_ready"].values())[:1] or [["greedy"]]
        while not stop.is_set() and len(out["warm_decoder"]) < 200:
            i = len(out["warm_decoder"])
            body = {"sentences": [f"The {i} dogs barked at the mail carrier ."],
                    "decoder": warm[0]}
            out["warm_decoder"].append({"decoder": warm[0], **_post(url, body, t0, 30)})
            time.sleep(0.5)

    side = threading.Thread(target=warm_client, daemon=True)
    try:
        while time.monotonic() - t0 < timeout:
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited with {proc.returncode}")
            try:
                r = httpx.get(url + "/ready", timeout=2)
                if r.status_code == 200:
                    out["ready_s"] = round(time.monotonic() - t0, 1)
                    out["warm_at_ready"] = {n: m.get("warm") for n, m in
                                            r.json().get("models", {}).items()}
                    break
            except (httpx.HTTPError, ValueError):
                pass
            time.sleep(0.2)
        side.start()
        while time.monotonic() - t0 < timeout and out["first_200_s"] is None:
            res = _post(url, README_BODY, t0, 60)
            out["readme"].append(res)
            if res["status"] == 200:
                out["first_200_s"] = res["answered_s"]
        while time.monotonic() - t0 < timeout and out["all_warm_s"] is None:
            try:
                body = httpx.get(url + "/ready", timeout=5).json()
                if all(set(m.get("warm", m["decoders"])) >= set(m["decoders"])
                       for m in body.get("models", {}).values()):
                    out["all_warm_s"] = round(time.monotonic() - t0, 1)
            except (httpx.HTTPError, ValueError):
                pass
            time.sleep(0.5)
    finally:
        stop.set()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        side.join(35) if side.is_alive() else None
        shutil.rmtree(cache, ignore_errors=True)
    slow = [w for w in out["warm_decoder"] if w["status"] != 200 or w["took_s"] > 2.0]
    out["warm_decoder_summary"] = {
        "n": len(out["warm_decoder"]), "not_200_or_over_2s": len(slow),
        "max_took_s": max((w["took_s"] for w in out["warm_decoder"]), default=None)}
    out["warm_decoder"] = slow[:10]      # the ones worth reading
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--busy", type=int, default=0, help="`yes > /dev/null` processes beside")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--log", default=os.devnull, help="append the servers' output here")
    args = ap.parse_args()
    busy = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(args.busy)]
    try:
        with open(args.log, "ab") as log:
            for run in range(args.runs):
                la = os.getloadavg()
                res = run_once(args.workers, args.timeout, log)
                res.update(run=run, busy=args.busy, workers=args.workers,
                           loadavg_before=[round(x, 2) for x in la],
                           loadavg_after=[round(x, 2) for x in os.getloadavg()],
                           date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                           machine=_machine())
                print(json.dumps(res), flush=True)
    finally:
        for p in busy:
            p.kill()
            p.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
