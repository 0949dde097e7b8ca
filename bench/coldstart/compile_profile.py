"""Where a cold start's time goes: numba compile time per kernel and per decoder.

Loads a model and parses one sentence with every decoder, in one process, with an
empty NUMBA_CACHE_DIR (a fresh install), recording numba's "numba:compile" events.
A kernel's own time excludes the kernels it calls (compiled inside its event);
functions inlined with `inline="always"` count in their caller. Each stage (load,
then each decoder in turn) is charged only for what it compiled first.

Usage (from the repository root):
    python bench/coldstart/compile_profile.py [--model en_ewt] [--top 40]
Prints one JSON object: {"stages": {stage: [wall s, CPU s]}, "kernels": [[name, self s,
total s, stage], ...], "compile_seconds": total}.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="en_ewt")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--decoders", help="comma-separated, in this order (default: all)")
    args = ap.parse_args()
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="deptree-cold-")

    from numba.core import event

    rec = event.RecordingListener()
    event.register("numba:compile", rec)   # before the import: some kernels compile there
    stages: dict[str, float] = {}
    marks: list[tuple[float, str]] = []

    def stage(name: str, fn) -> None:
        marks.append((time.time(), name))
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        stages[name] = [round(time.perf_counter() - t0, 2), round(time.process_time() - c0, 2)]

    words = "The quick brown fox jumped over the lazy dog .".split()
    Pipeline = None

    def imports():
        nonlocal Pipeline
        from models.serve.pipeline import Pipeline
    stage("import", imports)
    if True:
        pipe = None

        def load():
            nonlocal pipe
            pipe = Pipeline.load(args.model)
        stage("load", load)
        stage("tag", lambda: pipe.tag(words))
        for decoder in (args.decoders.split(",") if args.decoders else pipe.decoders()):
            stage(decoder, lambda d=decoder: pipe.parse_words(words, d, {}))
    event.unregister("numba:compile", rec)

    # self time = own span minus the spans of the compiles nested inside it
    stack: list[list] = []
    kernels = []
    for ts, ev in rec.buffer:
        if ev.is_start:
            stack.append([ts, 0.0, ev.data["dispatcher"]])
        else:
            t0, nested, disp = stack.pop()
            total = ts - t0
            if stack:
                stack[-1][1] += total
            where = max((m for m in marks if m[0] <= t0), default=(0, "?"))[1]
            py = disp.py_func
            kernels.append([f"{py.__module__}.{py.__qualname__}", round(total - nested, 2),
                            round(total, 2), where])
    kernels.sort(key=lambda k: -k[1])
    print(json.dumps({"stages": stages,
                      "compile_seconds": round(sum(k[1] for k in kernels), 1),
                      "kernels": kernels[:args.top]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
