"""Load and soak run of the REST service on loopback (issue 8, part 1).

Starts a real redis-server (cache) and `python -m app.serve_cli serve` (local
backend, `--workers` processes) on free loopback ports, then `--threads` client
threads send requests for `--duration` seconds (and at most `--max-requests`):
- each request holds 1-4 sentences of en_ewt dev (gold tokens; lengths 1-75 as
  in dev, and with probability `--long` two sentences joined, up to 120 tokens);
- the decoder is drawn from what GET /models lists (every served decoder), with
  its default budget but a random seed or beam where it has one (1 in 4 greedy
  requests with fewer restarts), so a fresh request mostly misses the cache;
- with probability `--hit-rate` the request repeats one sent before (cache hit).
Every answer is checked: HTTP 200, one tree per sentence with as many tokens as
sent, heads in 0..n, exactly one root, no cycle, a label on every arc. It reports
throughput, p50/p95/p99 latency (overall and per decoder), errors, and the RSS
of the gateway and of each worker after a warm-up (`--warmup` s, so every decoder
has been loaded and compiled) and at the end: the growth per process.

Usage (repository root; quiet machine):
    python bench/load/soak.py --duration 600 [--threads 4] [--workers 2]
        [--hit-rate 0.3] [--out runs/soak.md]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict

import httpx

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)

from bench.load.bench_service import free_port, wait_ready
from models.conllu import read_conllu

DEV = os.path.join(ROOT, "..", "shared", "data", "en_ewt", "dev.conllu")


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q / 100 * (len(xs) - 1)))]


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def check_tree(sent: list[str], tree: dict) -> str | None:
    """None when `tree` is a valid dependency tree over `sent`, else what is wrong."""
    toks = tree.get("tokens", [])
    n = len(toks)
    if n != len(sent):
        return f"{n} tokens for {len(sent)} sent"
    heads = [t.get("head") for t in toks]
    if any(not isinstance(h, int) or not 0 <= h <= n for h in heads):
        return f"head out of range: {heads}"
    if sum(h == 0 for h in heads) != 1:
        return f"{sum(h == 0 for h in heads)} roots"
    if any(not t.get("deprel") for t in toks):
        return "missing label"
    for i in range(1, n + 1):           # walk up from every word: must reach the root
        seen, j = 0, i
        while j != 0 and seen <= n:
            j, seen = heads[j - 1], seen + 1
        if j != 0:
            return "cycle"
    return None


class Client(threading.Thread):
    def __init__(self, k: int, url: str, pool: list[list[str]], decoders: dict[str, dict],
                 args, stop_at: float, stats: dict, lock: threading.Lock) -> None:
        super().__init__(daemon=True)
        self.rng = random.Random(1000 + k)
        self.url, self.pool, self.decoders, self.args = url, pool, decoders, args
        self.stop_at, self.stats, self.lock = stop_at, stats, lock
        self.sent: list[dict] = []

    def body(self) -> dict:
        rng = self.rng
        if self.sent and rng.random() < self.args.hit_rate:
            return rng.choice(self.sent)
        sents = []
        for _ in range(rng.randint(1, 4)):
            s = list(rng.choice(self.pool))
            if rng.random() < self.args.long:
                s = (s + list(rng.choice(self.pool)))[:120]
            sents.append(s)
        dec = rng.choice(sorted(self.decoders))
        body: dict = {"sentences": sents, "decoder": dec}
        # a fresh request should miss the cache: a new seed or beam where the decoder
        # has one (mst has neither, so its repeats of a dev sentence hit)
        fields = self.decoders[dec]["fields"]
        if "seed" in fields:
            body["seed"] = rng.randint(0, 10**9)
        if "beam" in fields:
            body["beam"] = rng.randint(1, 8)
        if "restarts" in fields and rng.random() < 0.25:
            body["restarts"] = rng.choice([5, 20, 50])
        self.sent.append(body)
        return body

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=self.args.timeout) as c:
            while time.monotonic() < self.stop_at:
                with self.lock:
                    if self.stats["requests"] >= self.args.max_requests:
                        return
                    self.stats["requests"] += 1
                body = self.body()
                t0 = time.perf_counter()
                err = None
                try:
                    r = c.post("/parse", json=body)
                    secs = time.perf_counter() - t0
                    if r.status_code != 200:
                        err = f"HTTP {r.status_code}: {r.text[:200]}"
                    else:
                        out = r.json()["sentences"]
                        if len(out) != len(body["sentences"]):
                            err = "sentence count"
                        for s, tree in zip(body["sentences"], out):
                            err = err or check_tree(s, tree)
                except httpx.HTTPError as exc:
                    secs = time.perf_counter() - t0
                    err = f"{type(exc).__name__}: {exc}"
                toks = sum(len(s) for s in body["sentences"])
                with self.lock:
                    st = self.stats
                    if err:
                        st["errors"].append(err)
                    else:
                        st["lat"].append(secs)
                        st["lat_by"][body["decoder"]].append(secs)
                        st["tokens"] += toks
                        st["sentences"] += len(body["sentences"])
                        st["cached"] += sum(t["cached"] for t in out)


def start(args, log_path: str):
    rport, port = free_port(), free_port()
    rdir = tempfile.mkdtemp(prefix="deptree-soak-redis-")
    redis = subprocess.Popen(["redis-server", "--port", str(rport), "--bind", "127.0.0.1",
                              "--save", "", "--appendonly", "no", "--dir", rdir],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = dict(os.environ, DEPTREE_MODELS=args.model)
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    with open(log_path, "ab") as log:     # the server keeps its own descriptor
        gw = subprocess.Popen([sys.executable, "-m", "app.serve_cli", "serve", "--port",
                               str(port), "--workers", str(args.workers), "--redis-url",
                               f"redis://127.0.0.1:{rport}/0"], cwd=ROOT, env=env, stdout=log,
                              stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    wait_ready(gw, url, args.workers, log_path)
    return redis, rdir, gw, url


def processes(url: str, gw_pid: int) -> dict[str, int]:
    st = httpx.get(url + "/ready", timeout=10).json()["workers"]
    procs = {"gateway": gw_pid}
    for w in st["workers"]:
        procs[f"worker {w['name']}"] = w["pid"]
    return procs


def machine() -> str:
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")),
                     platform.processor())
    return f"{os.cpu_count()} cores, {model}, Python {platform.python_version()}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--duration", type=float, default=600, help="seconds of measured load")
    ap.add_argument("--warmup", type=float, default=60, help="seconds of load before 'before'")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--hit-rate", type=float, default=0.3)
    ap.add_argument("--long", type=float, default=0.05)
    ap.add_argument("--max-requests", type=int, default=200_000)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--model", default="en_ewt")
    ap.add_argument("--out", default="runs/soak.md")
    args = ap.parse_args(argv)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)

    with open(DEV, encoding="utf-8") as f:
        pool = [[w.form for w in s.words] for s in read_conllu(f)]
    redis, rdir, gw, url = start(args, args.out + ".server.log")
    try:
        cat = httpx.get(url + "/models", timeout=10).json()["models"][args.model]["decoders"]
        lock = threading.Lock()

        def run_phase(seconds: float) -> dict:
            stats = {"requests": 0, "errors": [], "lat": [], "lat_by": defaultdict(list),
                     "tokens": 0, "sentences": 0, "cached": 0}
            stop_at = time.monotonic() + seconds
            cs = [Client(k, url, pool, cat, args, stop_at, stats, lock)
                  for k in range(args.threads)]
            t0 = time.perf_counter()
            for c in cs:
                c.start()
            for c in cs:
                c.join()
            stats["seconds"] = time.perf_counter() - t0
            return stats

        warm = run_phase(args.warmup)
        procs = processes(url, gw.pid)
        before = {name: rss_mb(pid) for name, pid in procs.items()}
        started = datetime.datetime.now(datetime.UTC)
        st = run_phase(args.duration)
        procs_after = processes(url, gw.pid)
        after = {name: rss_mb(pid) for name, pid in procs_after.items()}
    finally:
        gw.send_signal(signal.SIGTERM)
        try:
            gw.wait(60)
        except subprocess.TimeoutExpired:
            gw.kill()
        redis.terminate()
        redis.wait(10)
        shutil.rmtree(rdir, ignore_errors=True)

    n_ok = len(st["lat"])
    errs = Counter(e.split(":")[0] for e in st["errors"])
    lines = [
        f"Command: `python bench/load/soak.py --duration {args.duration:g} --warmup "
        f"{args.warmup:g} --threads {args.threads} --workers {args.workers} --hit-rate "
        f"{args.hit_rate:g}`",
        f"Date: {started:%Y-%m-%d %H:%M} UTC. Machine: {machine()}.",
        f"Service: local backend, {args.workers} workers, Redis cache (redis-server on"
        f" loopback); decoders {', '.join(sorted(cat))}.",
        "",
        "| measure | value |", "| --- | --- |",
        f"| measured load | {st['seconds']:.0f} s after a {args.warmup:g} s warm-up"
        f" ({warm['requests']} requests, {len(warm['errors'])} errors) |",
        f"| requests answered / errors | {n_ok} / {len(st['errors'])} |",
        f"| throughput | {n_ok / st['seconds']:.1f} requests/s, "
        f"{st['sentences'] / st['seconds']:.1f} sentences/s, "
        f"{st['tokens'] / st['seconds']:.0f} tokens/s |",
        f"| sentences from the cache | {st['cached']} of {st['sentences']}"
        f" ({100 * st['cached'] / max(1, st['sentences']):.1f}%) |",
        f"| latency p50 / p95 / p99 | {1000 * pct(st['lat'], 50):.0f} / "
        f"{1000 * pct(st['lat'], 95):.0f} / {1000 * pct(st['lat'], 99):.0f} ms |",
        f"| trees valid (an invalid tree counts as an error) | {st['sentences']} |",
        "",
        "| decoder | requests | p50 ms | p95 ms | p99 ms |", "| --- | --- | --- | --- | --- |",
    ]
    for dec in sorted(st["lat_by"]):
        xs = st["lat_by"][dec]
        lines.append(f"| {dec} | {len(xs)} | {1000 * pct(xs, 50):.0f} | "
                     f"{1000 * pct(xs, 95):.0f} | {1000 * pct(xs, 99):.0f} |")
    lines += ["", "| process | RSS before (MB) | RSS after (MB) | growth |",
              "| --- | --- | --- | --- |"]
    worst = 0.0
    for name in before:
        if name in after:
            g = 100 * (after[name] - before[name]) / before[name]
            worst = max(worst, g)
            lines.append(f"| {name} | {before[name]:.0f} | {after[name]:.0f} | {g:+.1f}% |")
        else:
            lines.append(f"| {name} | {before[name]:.0f} | (replaced) | - |")
    lines += ["", f"Largest growth {worst:+.1f}% (goal < 5%); errors {len(st['errors'])}"
              f" (goal 0){': ' + json.dumps(dict(errs)) if errs else ''}."]
    report = "\n".join(lines) + "\n"
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(report)
    print(report)
    for e in st["errors"][:10]:
        print("error:", e, file=sys.stderr)
    return 0 if not st["errors"] and worst < 5 else 1


if __name__ == "__main__":
    sys.exit(main())
