"""The neural analyser's training step with float32 and with bfloat16 matrix products
(`models/neural/precision.py`), timed in one process, alternating rounds over the same
batches of a treebank's train file: the ratio is what a build's neural stage gains.

    python bench/treebanks/train_step.py [TREEBANK] [--sentences N] [--rounds R]
    python bench/treebanks/train_step.py [TREEBANK] --huge-pages [--rounds R]

With --huge-pages, each round runs three processes one after the other, since glibc
reads its tunables when a process starts: float32 as a process starts by default,
float32 with the build's huge pages (`models.build.children.HUGE_PAGES`), and bfloat16 with
them; each process times the same batches after compiling its step.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.treebanks.data import split_files, write_result
from models.build.children import HUGE_PAGES, words
from models.neural import batches as B
from models.neural.jax_net import import_jax, init_params
from models.neural.precision import hardware_bf16
from models.neural.train import NeuralConfig, make_optimizer, make_step
from models.neural.vocab import Lookup, Vocab

VARIANTS = {"f32": ("f32", None), "f32+huge": ("f32", HUGE_PAGES),
            "bf16+huge": ("bf16", HUGE_PAGES)}


def setup(treebank: str, sentences: int, n_batches: int):
    """(config, vocab, params, optimizer, batches of the packed rows' one shape)."""
    jax, _, _ = import_jax()
    train = words(split_files(treebank)[0])[:sentences]
    cfg = NeuralConfig()
    vocab = Vocab.build([[(w[0], w[1], w[2], w[3], w[5]) for w in s] for s in train])
    data = B.Encoded(train, Lookup(vocab), None)
    params = init_params(jax.random.PRNGKey(0), vocab, cfg, None)
    opt = make_optimizer(cfg)                          # the build's optimizer
    rng = np.random.default_rng(0)
    arrays = [data.arrays(b, cfg.batch_tokens, rng, cfg.word_dropout)
              for b in data.batches(rng.permutation(len(data)), cfg.batch_tokens)]
    shape = arrays[0]["words"].shape                   # the packed rows' shape only
    batches = [B.to_device(a) for a in arrays if a["words"].shape == shape][:n_batches]
    return cfg, vocab, params, opt, batches


def run_steps(step, params, opt, batches, key) -> float:
    """Seconds a step over the batches, from fresh optimizer state."""
    q, s = params, opt.init(params)
    t0 = time.perf_counter()
    for b in batches:
        q, s, loss = step(q, s, b, key)
        loss.block_until_ready()
    return (time.perf_counter() - t0) / len(batches)


def child(args) -> None:
    """One process of --huge-pages: print the seconds of a step at args.child."""
    jax, _, _ = import_jax()
    cfg, vocab, params, opt, batches = setup(args.treebank, args.sentences, args.batches)
    step = make_step(cfg, None, len(vocab.affixes), opt, args.child)
    key = jax.random.PRNGKey(1)
    jax.block_until_ready(step(params, opt.init(params), batches[0], key))   # compile
    print(json.dumps({"seconds": run_steps(step, params, opt, batches, key),
                      "shape": list(batches[0]["words"].shape), "batches": len(batches)}))


def huge_pages(args) -> None:
    seconds: dict[str, list[float]] = {v: [] for v in VARIANTS}
    info = {}
    for _ in range(args.rounds):
        for name, (precision, tunables) in VARIANTS.items():
            env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
            if tunables:
                env["GLIBC_TUNABLES"] = tunables
            out = subprocess.run([sys.executable, __file__, args.treebank, "--child", precision,
                                  "--sentences", str(args.sentences), "--batches",
                                  str(args.batches)], env=env, capture_output=True, text=True,
                                 check=True)
            info = json.loads(out.stdout.strip().splitlines()[-1])
            seconds[name].append(info["seconds"])
    best = {v: min(x) for v, x in seconds.items()}
    report(args, info["shape"], info["batches"], seconds,
           {"speedup_vs_f32": {v: round(best["f32"] / x, 3) for v, x in best.items()}},
           f"train_step_huge_{args.treebank}.json")


def precisions(args) -> None:
    jax, _, _ = import_jax()
    cfg, vocab, params, opt, batches = setup(args.treebank, args.sentences, args.batches)
    steps = {p: make_step(cfg, None, len(vocab.affixes), opt, p) for p in ("f32", "bf16")}
    key = jax.random.PRNGKey(1)
    for step in steps.values():                        # compile
        jax.block_until_ready(step(params, opt.init(params), batches[0], key))
    seconds: dict[str, list[float]] = {p: [] for p in steps}
    for _ in range(args.rounds):
        for p, step in steps.items():
            seconds[p].append(run_steps(step, params, opt, batches, key))
    report(args, list(batches[0]["words"].shape), len(batches), seconds,
           {"speedup": round(min(seconds["f32"]) / min(seconds["bf16"]), 3)},
           f"train_step_{args.treebank}.json")


def report(args, shape: list[int], n_batches: int, seconds: dict[str, list[float]],
           speedup: dict, name: str) -> None:
    """Write the seconds a step of each variant, round by round, the best, and speedup."""
    write_result({"treebank": args.treebank, "batch_shape": shape, "batches": n_batches,
                  "rounds": args.rounds, "machine": platform.processor() or platform.machine(),
                  "hardware_bf16": hardware_bf16(),
                  "ms_per_step": {v: [round(1000 * x, 1) for x in s] for v, s in seconds.items()},
                  "best_ms": {v: round(1000 * min(s), 1) for v, s in seconds.items()},
                  **speedup}, name, args.out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("treebank", nargs="?", default="en_ewt")
    ap.add_argument("--sentences", type=int, default=4000)
    ap.add_argument("--batches", type=int, default=24)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--huge-pages", action="store_true")
    ap.add_argument("--child", choices=("f32", "bf16"), help=argparse.SUPPRESS)
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.child:
        child(args)
    elif args.huge_pages:
        huge_pages(args)
    else:
        precisions(args)


if __name__ == "__main__":
    main()
