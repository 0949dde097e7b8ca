"""The default request's speed with two source trees of deptree, side by side: a ratio
that holds on a noisy machine.

    OMP_NUM_THREADS=1 python bench/treebanks/speed_ab.py --before DIR --after DIR
        [--treebank en_ewt] [--model models/pretrained/en_ewt] [--rounds 3]
        [--decoder greedy] [--tagger auto] [--after-model DIR]

Each round times each tree once, alternating, in its own process (a tree's code is
imported from that tree; the model and the dev file are the same for both), on the
whole dev file of the treebank after a warm-up, in jobs of 16 sentences as a worker
runs them (look-ahead analysis, then each sentence's parse). Tokens/s is the child's
CPU time; the best round of each tree counts. `--before` is typically a copy of the
tree at the commit before a change (`git worktree add /tmp/before HEAD~1`). Two models
with one tree: `--before . --after . --model OLD --after-model NEW`.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"


def child(tree: str, dev: str, model: str, decoder: str, tagger: str) -> None:
    """Time the request over `dev` with the code of `tree`; print JSON."""
    sys.path.insert(0, tree)
    from models.conllu import read_conllu
    from models.serve.pipeline import Pipeline

    pipe = Pipeline.load(model)
    sents = [[w.form for w in s.words] for s in read_conllu(dev)]

    def run(sentences):
        for k in range(0, len(sentences), 16):
            chunk = sentences[k:k + 16]
            pipe.analyze_ahead(chunk, tagger, {})
            for forms in chunk:
                pipe.parse_words(forms, decoder, {}, tagger=tagger)

    run(sents[:40])                                    # compiles, fills caches
    t0 = time.process_time()
    run(sents)
    cpu = time.process_time() - t0
    print(json.dumps({"tokens": sum(map(len, sents)), "cpu_seconds": cpu}))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--model", default=str(ROOT / "models" / "pretrained" / "en_ewt"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--decoder", default="greedy")
    ap.add_argument("--tagger", default="auto")
    ap.add_argument("--after-model", default=None, help="the after tree's model (default: --model)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    dev = str(DATA / a.treebank / "dev.conllu")
    model = str(Path(a.model).resolve())
    if a.child:
        child(a.child, dev, model, a.decoder, a.tagger)
        return 0
    models = {"before": model, "after": str(Path(a.after_model or a.model).resolve())}
    trees = {"before": str(Path(a.before).resolve()), "after": str(Path(a.after).resolve())}
    best = {k: float("inf") for k in trees}
    tokens = 0
    for r in range(a.rounds):
        for name, tree in trees.items():
            out = subprocess.run([sys.executable, __file__, "--before", a.before, "--after",
                                  a.after, "--treebank", a.treebank, "--model", models[name],
                                  "--decoder", a.decoder, "--tagger", a.tagger,
                                  "--child", tree],
                                 capture_output=True, text=True, check=True,
                                 cwd=tree, env={**os.environ, "PYTHONPATH": tree})
            got = json.loads(out.stdout.strip().splitlines()[-1])
            tokens = got["tokens"]
            best[name] = min(best[name], got["cpu_seconds"])
            print(f"round {r + 1} {name}: {tokens / got['cpu_seconds']:,.0f} tokens/CPU-s",
                  flush=True)
    rate = {k: tokens / v for k, v in best.items()}
    print(json.dumps({"treebank": a.treebank, "models": models, "decoder": a.decoder,
                      "tagger": a.tagger,
                      "threads": os.environ.get("OMP_NUM_THREADS"),
                      "tokens_per_cpu_s": {k: round(v) for k, v in rate.items()},
                      "after_over_before": round(rate["after"] / rate["before"], 3)},
                     indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
