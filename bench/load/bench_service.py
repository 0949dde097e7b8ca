"""Load benchmark of the REST service on loopback, against in-process parsing.

For each worker count (default 1 and 2) it starts `python -m app.serve_cli serve`
(local backend, in-process LRU cache) on a free loopback port and measures, for
every decoder the service lists (GET /models, so later decoders are included):
- throughput: batches of 32 pre-tokenized en_ewt dev sentences, `--batches`
  requests sent by 2 x workers client threads; sentences/s and tokens/s;
- latency: `--latency-n` single 25-token sentences, one at a time; p50/p95/p99;
- cache-hit latency: the same single sentences again (every answer `cached`).
Then it parses the throughput sentences in this process with the same model,
decoder and default budget through `deptree.cli.parse_run.parse_stream` (what
`deptree parse --input tokens` runs) and reports service / in-process throughput
(goal >= 0.8 for batches of 32 with one worker). Every request count is bounded.

Usage (repository root; quiet machine):
    python bench/load/bench_service.py [--workers 1 2] [--batches 16] [--latency-n 100]
        [--model en_ewt] [--model-dir DIR] [--out runs/bench_service.md]
Writes the Markdown report to --out and prints it.
"""
from __future__ import annotations

import argparse
import datetime
import io
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)

from models.conllu import read_conllu


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q / 100 * (len(xs) - 1)))]


def start_server(workers: int, model: str, model_dirs: list[str], log: str):
    port = free_port()
    env = dict(os.environ, DEPTREE_MODELS=model, DEPTREE_MODEL_DIRS=os.pathsep.join(model_dirs),
               DEPTREE_CACHE_LRU_SIZE="100000")
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    with open(log, "ab") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "app.serve_cli", "serve", "--port",
                                 str(port), "--workers", str(workers)], cwd=ROOT, env=env,
                                stdout=fh, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    wait_ready(proc, url, workers, log)
    return proc, url


def wait_ready(proc, url: str, workers: int, log: str, timeout: float = 600) -> None:
    """Until /ready says `workers` workers are up; exits when the server dies or times out."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if proc.poll() is not None:
            raise SystemExit(f"server exited {proc.returncode}; see {log}")
        try:
            r = httpx.get(url + "/ready", timeout=5)
            if r.status_code == 200 and r.json()["workers"]["workers_up"] >= workers:
                return
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(0.5)
    proc.kill()
    raise SystemExit(f"server not ready after {timeout:.0f} s")


def throughput(url: str, model: str, decoder: str, batches: list[list[list[str]]],
               threads: int) -> dict:
    with httpx.Client(base_url=url, timeout=600) as c:
        c.post("/parse", json={"sentences": [["Warm", "up", "."]], "model": model,
                               "decoder": decoder})

        def one(batch):
            r = c.post("/parse", json={"sentences": batch, "model": model, "decoder": decoder})
            r.raise_for_status()
            return sum(not s["cached"] for s in r.json()["sentences"])

        t0 = time.perf_counter()
        with ThreadPoolExecutor(threads) as ex:
            fresh = sum(ex.map(one, batches))
        secs = time.perf_counter() - t0
    n = sum(len(b) for b in batches)
    toks = sum(len(s) for b in batches for s in b)
    return {"sentences": n, "tokens": toks, "seconds": secs, "fresh": fresh,
            "sent_per_s": n / secs, "tok_per_s": toks / secs}


def latency(url: str, model: str, decoder: str, sents: list[list[str]]) -> tuple[dict, dict]:
    out = []
    with httpx.Client(base_url=url, timeout=600) as c:
        for _round in ("miss", "hit"):
            lat, cached = [], 0
            for s in sents:
                t0 = time.perf_counter()
                r = c.post("/parse", json={"sentences": [s], "model": model, "decoder": decoder})
                lat.append(time.perf_counter() - t0)
                r.raise_for_status()
                cached += r.json()["sentences"][0]["cached"]
            out.append({"n": len(lat), "cached": cached, "p50": pct(lat, 50),
                        "p95": pct(lat, 95), "p99": pct(lat, 99)})
    return out[0], out[1]


def in_process(model: str, model_dirs: list[str], decoder: str,
               sents: list[list[str]]) -> dict:
    from pathlib import Path

    from deptree.cli.parse_run import parse_stream
    from models.serve.registry import resolve

    path = str(resolve(model, search_dirs=[Path(d) for d in model_dirs]))
    text = "\n".join(" ".join(s) for s in sents) + "\n"
    parse_stream(io.StringIO(" ".join(sents[0]) + "\n"), io.StringIO(), model=path,
                 decoder=decoder, budget={}, input_format="tokens")          # load + warm
    res = parse_stream(io.StringIO(text), io.StringIO(), model=path, decoder=decoder,
                       budget={}, input_format="tokens")
    return {"sentences": res["sentences"], "tokens": res["tokens"], "seconds": res["seconds"],
            "sent_per_s": res["sentences"] / res["seconds"],
            "tok_per_s": res["tokens"] / res["seconds"]}


def machine() -> str:
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")),
                   platform.processor())
    load = os.getloadavg()
    return (f"{os.cpu_count()} cores (`nproc`), {platform.machine()}, {cpu}; load average at"
            f" start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="en_ewt")
    p.add_argument("--model-dir", action="append", default=[])
    p.add_argument("--dev", default=os.path.join(ROOT, "..", "shared", "data", "en_ewt",
                                                 "dev.conllu"))
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--decoders", nargs="+", help="default: every decoder the service lists")
    p.add_argument("--batches", type=int, default=16, help="requests of 32 sentences")
    p.add_argument("--latency-n", type=int, default=100)
    p.add_argument("--out", default=os.path.join(ROOT, "runs", "bench_service.md"),
                   help="Markdown report (its figures are recorded in bench/RESULTS.md)")
    p.add_argument("--log", default="/tmp/deptree_bench_service.log")
    args = p.parse_args(argv)

    dev = [[w.form for w in s.words] for s in read_conllu(args.dev)]
    # 25-token sentences: those of exactly 25 words, then the first 25 words of longer ones
    exact = [s for s in dev if len(s) == 25]
    cut = [s[:25] for s in dev if len(s) > 25]
    lat_src = (exact + cut)[:args.latency_n]
    lat_sents = [list(s) for s in lat_src]
    # distinct sentences only, so that no throughput request is answered from the cache
    seen = {tuple(s) for s in lat_sents}
    pool = []
    for s in dev:
        if tuple(s) not in seen:
            seen.add(tuple(s))
            pool.append(s)
    args.batches = min(args.batches, len(pool) // 32)
    need = 32 * args.batches
    tp_sents = pool[:need]
    batches = [tp_sents[i:i + 32] for i in range(0, need, 32)]
    started = datetime.datetime.now(datetime.UTC).strftime("%a %b %d %H:%M UTC %Y")
    mach = machine()
    results: dict = {}
    decoders = args.decoders
    version = "?"
    for w in args.workers:
        proc, url = start_server(w, args.model, args.model_dir, args.log)
        try:
            info = httpx.get(url + "/models").json()["models"][args.model]
            version = info["version"]
            decoders = decoders or sorted(info["decoders"])
            for d in decoders:
                tp = throughput(url, args.model, d, batches, threads=2 * w)
                miss, hit = latency(url, args.model, d, lat_sents)
                results[(w, d)] = {"tp": tp, "miss": miss, "hit": hit}
                print(json.dumps({"workers": w, "decoder": d, **results[(w, d)]}), flush=True)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)
    base = {d: in_process(args.model, args.model_dir, d, tp_sents) for d in decoders}
    for d, b in base.items():
        print(json.dumps({"in_process": d, **b}), flush=True)

    cmd = "python bench/load/bench_service.py " + " ".join(argv if argv is not None
                                                          else sys.argv[1:])
    lines = [
        "# Service load benchmark (loopback)", "",
        "Command (repository root):", "", f"    {cmd.strip()}", "",
        (f"Date: {started}. Machine: {mach}. Model {args.model} version {version}; default"
         " budgets; local backend; client threads = 2 x workers, on the same machine"
         " (the client's CPU use counts against the service)."), "",
        (f"Throughput: {args.batches} requests of 32 pre-tokenized en_ewt dev sentences"
         f" ({need} sentences in dev order, {sum(map(len, tp_sents))} tokens)."
         " In-process: the same sentences through `parse_stream` (`deptree parse --input"
         " tokens`), one process, model loaded and warm."), "",
        "| decoder | workers | sentences/s | tokens/s | service / in-process |",
        "| --- | --- | --- | --- | --- |",
    ]
    for (w, d), r in sorted(results.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        ratio = r["tp"]["sent_per_s"] / base[d]["sent_per_s"]
        assert r["tp"]["fresh"] == need, "a throughput request was answered from the cache"
        lines.append(f"| {d} | {w} | {r['tp']['sent_per_s']:.1f} | {r['tp']['tok_per_s']:.0f} |"
                     f" {ratio:.2f} |")
    for d, b in base.items():
        lines.append(f"| {d} | in-process | {b['sent_per_s']:.1f} | {b['tok_per_s']:.0f} | 1 |")
    lines += ["", (f"Latency of single 25-token sentences ({len(lat_sents)} requests, one at a"
                   f" time: the {min(len(exact), len(lat_sents))} dev sentences of 25 words, then"
                   " the first 25 words of longer ones), milliseconds; then the same requests"
                   " again, answered from the cache:"), "",
              "| decoder | workers | p50 | p95 | p99 | cache hit p50 | p95 | p99 |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (w, d), r in sorted(results.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        m, h = r["miss"], r["hit"]
        lines.append(f"| {d} | {w} | {m['p50'] * 1e3:.1f} | {m['p95'] * 1e3:.1f} |"
                     f" {m['p99'] * 1e3:.1f} | {h['p50'] * 1e3:.1f} | {h['p95'] * 1e3:.1f} |"
                     f" {h['p99'] * 1e3:.1f} |")
    lines += ["", ("Goal: service / in-process >= 0.8 for batches of 32 with one worker. With"
                   " one worker the gateway (HTTP, JSON, validation) runs on the second core while"
                   " the worker decodes, so the service can go faster than the single in-process"
                   " loop, which also formats CoNLL-U between sentences.")]
    report = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(report)
    sys.stdout.write(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
