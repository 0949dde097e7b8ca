"""One client's 1 ms-deadline requests against another client's answers (issue 61, defect 1).

The review's repro: 8 distinct 250-token sentences, `"decoder": "greedy",
"deadline_ms": 1`. The gateway answers 504 within a second, but the analyser used to
go on analysing the whole look-ahead window (2,048 tokens) before anything checked
that nobody waited any more, so both workers stayed busy for seconds.

For each source tree (default: this checkout) it starts `python -m app.serve_cli
serve --workers 2` from that tree and
1. `repro`: sends the repro once (and the issue's second one: 256 sentences, `mst`,
   `deadline_ms` 3000), and records when the answer came and when /ready's
   `in_flight` was 0 again;
2. `load`: for `--seconds` s a normal client sends one request a second (two en_ewt
   dev sentences, the default request, `deadline_ms` 2000) while another sends the
   repro once a second; it counts the normal client's answers by status.

Usage (repository root; the numba cache warm, or --cache DIR shared by the runs):
    python bench/load/ahead_abuse.py [--src DIR ...] [--seconds 50]
Prints one JSON object per tree.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import httpx

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path[:0] = [os.path.join(ROOT, "tests", "reliability"), os.path.join(ROOT, "tests")]

from load_driver import dev_sentences  # noqa: E402

WORDS = ["the", "old", "dogs", "near", "green", "houses", "barked", "at", "many", "people",
         "while", "they", "walked", "slowly", "into", "distant", "fields", "and", "talked",
         "about", "strange", "music", "from", "cities"]


def long_sentence(i: int, n: int = 250) -> list[str]:
    """A distinct `n`-token sentence (a token list), never in the analyser's cache."""
    return [f"{WORDS[(i + j) % len(WORDS)]}{i}x{j}" for j in range(n)]


def repro_body(k: int, n_sent: int = 8, decoder: str = "greedy", deadline_ms: float = 1,
               tokens: int = 250) -> dict:
    return {"sentences": [long_sentence(k * 1000 + i, tokens) for i in range(n_sent)],
            "decoder": decoder, "deadline_ms": deadline_ms}


def in_flight(url: str) -> int:
    return httpx.get(url + "/ready", timeout=10).json()["workers"]["in_flight"]


def repro_once(url: str, body: dict) -> dict:
    t0 = time.monotonic()
    r = httpx.post(url + "/parse", json=body, timeout=120)
    answered = time.monotonic() - t0
    while in_flight(url) and time.monotonic() - t0 < 120:
        time.sleep(0.02)
    return {"status": r.status_code, "answered_s": round(answered, 2),
            "workers_free_s": round(time.monotonic() - t0, 2)}


def load(url: str, seconds: float) -> dict:
    normal = dev_sentences(400)
    counts: dict[str, int] = {}
    abuse: dict[str, int] = {}
    stop = threading.Event()

    def abuser() -> None:
        k = 100
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                r = httpx.post(url + "/parse", json=repro_body(k), timeout=60)
                key = str(r.status_code)
            except httpx.HTTPError as exc:
                key = type(exc).__name__
            abuse[key] = abuse.get(key, 0) + 1
            k += 1
            stop.wait(max(0.0, 1.0 - (time.monotonic() - t0)))

    th = threading.Thread(target=abuser, daemon=True)
    th.start()
    t_end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < t_end:
        t0 = time.monotonic()
        body = {"sentences": normal[2 * i:2 * i + 2], "deadline_ms": 2000}
        try:
            r = httpx.post(url + "/parse", json=body, timeout=60)
            key = str(r.status_code)
        except httpx.HTTPError as exc:
            key = type(exc).__name__
        counts[key] = counts.get(key, 0) + 1
        i += 1
        time.sleep(max(0.0, 1.0 - (time.monotonic() - t0)))
    stop.set()
    th.join(60)
    return {"normal_client": counts, "abuser": abuse, "seconds": seconds}


def run_tree(src: str, seconds: float, cache: str | None, log) -> dict:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
    env.update(PYTHONPATH=src, PYTHONDONTWRITEBYTECODE="1")
    if cache:
        env["NUMBA_CACHE_DIR"] = cache
    proc = subprocess.Popen([sys.executable, "-m", "app.serve_cli", "serve", "--port", str(port),
                             "--workers", "2", "--no-cache"], cwd=src, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    try:
        t0 = time.monotonic()
        while True:
            assert proc.poll() is None, "the server exited"
            assert time.monotonic() - t0 < 900, "not ready"
            try:
                body = httpx.get(url + "/ready", timeout=5).json()
                if body["workers"]["workers_up"] == 2 and all(
                        set(m["warm"]) >= set(m["decoders"]) for m in body["models"].values()):
                    break
            except (httpx.HTTPError, ValueError, KeyError):
                pass
            time.sleep(0.5)
        out = {"repro_greedy_8x250_1ms": repro_once(url, repro_body(1)),
               "repro_mst_256_3000ms": repro_once(url, repro_body(2, 256, "mst", 3000, 60)),
               "repro_mst_256_3000ms_fast": repro_once(
                   url, {**repro_body(3, 256, "mst", 3000, 60), "tagger": "fast"})}
        out["load"] = load(url, seconds)
        out["loadavg"] = [round(x, 2) for x in os.getloadavg()]
        out["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        return out
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", action="append", help="source tree (repeatable; default: here)")
    ap.add_argument("--seconds", type=float, default=50.0)
    ap.add_argument("--cache", help="NUMBA_CACHE_DIR for the servers (default: each tree's)")
    ap.add_argument("--log", default=os.devnull)
    args = ap.parse_args()
    with open(args.log, "ab") as log:
        for src in [os.path.abspath(s) for s in (args.src or [ROOT])]:
            print(json.dumps({src: run_tree(src, args.seconds, args.cache, log)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
