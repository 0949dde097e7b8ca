"""The neural analyser alone, with and without the contextual encoder, on one treebank.

    python bench/contextual/analyser_ab.py tr_imst --epochs 60 [--no-context] [--layers 1-5]

Trains one analyser on the treebank's train split (gold tags; its own tag classes)
for the given epochs and prints a JSON line: dev UAS / LAS / tag accuracy of the best
evaluated epoch (each word's most likely head, as `train_analyser` scores it), the
seconds of training, of the encoder's states, and the epoch of the best. Both arms
run the same code, seed and epochs, so the pair is a like-for-like comparison; run
one at a time (the figures are CPU-bound).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.treebanks.data import split_files  # noqa: E402
from models.build.children import words  # noqa: E402
from models.neural.train import NeuralConfig, train_analyser  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("treebank")
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--no-context", action="store_true")
    ap.add_argument("--layers", default="1-5")
    ap.add_argument("--context-dim", type=int, default=256)
    ap.add_argument("--work", default="runs/contextual")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    train_path, dev_path = split_files(a.treebank)
    train, dev = words(Path(train_path)), words(Path(dev_path))
    context = None
    lo, hi = (int(x) for x in a.layers.split("-"))
    if not a.no_context:
        from models.contextual.features import ContextualFeatures
        from models.contextual.source import EncoderSpec

        context = ContextualFeatures(EncoderSpec.new(layers=tuple(range(lo, hi + 1))))
    cfg = NeuralConfig(epochs=a.epochs, seed=a.seed, context_dim=a.context_dim)
    work = Path(a.work) / a.treebank
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    an = train_analyser(train, dev, cfg, context=context, checkpoint_dir=None if context is None
                        else work)
    hist = an.meta["history"]
    print(json.dumps({"treebank": a.treebank, "context": None if context is None else a.layers,
                      "epochs": a.epochs, "dev": an.meta["dev"],
                      "best_epoch": an.meta["best_epoch"],
                      "train_seconds": round(sum(r["seconds"] for r in hist)),
                      "wall_seconds": round(time.time() - t0)}))


if __name__ == "__main__":
    main()
