"""The neural analyser's training step with float32 and with bfloat16 matrix products
(`models/neural/precision.py`), timed in one process, alternating rounds over the same
batches of a treebank's train file: the ratio is what a build's neural stage gains.

    python bench/treebanks/train_step.py [TREEBANK] [--sentences N] [--rounds R]
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.treebanks.data import split_files, write_result
from models.build import _words
from models.neural import batches as B
from models.neural.jax_net import import_jax, init_params
from models.neural.precision import hardware_bf16
from models.neural.train import NeuralConfig, make_optimizer, make_step
from models.neural.vocab import Lookup, Vocab


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("treebank", nargs="?", default="en_ewt")
    ap.add_argument("--sentences", type=int, default=4000)
    ap.add_argument("--batches", type=int, default=24)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    jax, _, _ = import_jax()
    train = _words(split_files(args.treebank)[0])[:args.sentences]
    cfg = NeuralConfig()
    vocab = Vocab.build([[(w[0], w[1], w[2], w[3], w[5]) for w in s] for s in train])
    data = B.Encoded(train, Lookup(vocab), None)
    params = init_params(jax.random.PRNGKey(0), vocab, cfg, None)
    opt = make_optimizer(cfg, args.rounds * args.batches)   # the build's optimizer
    rng = np.random.default_rng(0)
    arrays = [data.arrays(b, cfg.batch_tokens, rng, cfg.word_dropout)
              for b in data.batches(rng.permutation(len(data)), cfg.batch_tokens)]
    shape = arrays[0]["words"].shape                   # the packed rows' shape only
    batches = [B.to_device(a) for a in arrays if a["words"].shape == shape][:args.batches]
    steps = {p: make_step(cfg, None, len(vocab.affixes), opt, p) for p in ("f32", "bf16")}
    key = jax.random.PRNGKey(1)
    for step in steps.values():                        # compile
        jax.block_until_ready(step(params, opt.init(params), batches[0], key))
    seconds: dict[str, list[float]] = {p: [] for p in steps}
    for _ in range(args.rounds):
        for p, step in steps.items():
            q, s = params, opt.init(params)
            t0 = time.perf_counter()
            for b in batches:
                q, s, loss = step(q, s, b, key)
                loss.block_until_ready()
            seconds[p].append((time.perf_counter() - t0) / len(batches))
    best = {p: min(v) for p, v in seconds.items()}
    write_result({"treebank": args.treebank, "batch_shape": list(shape),
                  "batches": len(batches), "rounds": args.rounds,
                  "machine": platform.processor() or platform.machine(),
                  "amx_bf16": hardware_bf16(),
                  "ms_per_step": {p: [round(1000 * x, 1) for x in v] for p, v in seconds.items()},
                  "best_ms": {p: round(1000 * x, 1) for p, x in best.items()},
                  "speedup": round(best["f32"] / best["bf16"], 3)},
                 f"train_step_{args.treebank}.json", args.out)


if __name__ == "__main__":
    main()
