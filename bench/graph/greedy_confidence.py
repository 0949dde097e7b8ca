"""Calibration of greedy's per-arc confidence at its default budget on en_ewt dev.

Parses every dev sentence as `deptree parse --model en_ewt --decoder greedy` does
(the model's own tags: `--tagger auto`, the accurate tagger with the analyser's arc
scores, or `--tagger fast`), with `"confidence": true`, and prints the reliability
table (confidence bins against head accuracy), the expected calibration error over
10 equal-width bins (as bench_sampling.py's `calibration`) and the share of words
given 1.0. `--fit` also prints the ECE of the 300 sentences (seed 0) the temperatures
of models/graph/confidence.py were fitted on, and of the rest. Not a test.

    python bench/graph/greedy_confidence.py --tagger auto
    python bench/graph/greedy_confidence.py --tagger fast
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from models.conllu import read_conllu
from models.graph.confidence import expected_calibration_error
from models.serve.pipeline import Pipeline

BINS = 10
FIT_SENTENCES, FIT_SEED = 300, 0


def ece(conf: np.ndarray, ok: np.ndarray) -> tuple[float, list[tuple]]:
    return expected_calibration_error(conf, ok, BINS)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="en_ewt")
    ap.add_argument("--dev", type=Path, default=Path("../shared/data/en_ewt/dev.conllu"))
    ap.add_argument("--tagger", default="auto")
    ap.add_argument("--fit", action="store_true")
    args = ap.parse_args()
    pipe = Pipeline.load(args.model)
    sents = [s for s in read_conllu(args.dev) if s.words]
    confs, oks = [], []
    t0 = time.perf_counter()
    for s in sents:
        tree = pipe.parse_words([w.form for w in s.words], "greedy", {"confidence": True},
                                tagger=args.tagger)
        confs.append(np.array(tree.stats["confidence"]))
        oks.append(np.array([t.head == w.head for t, w in zip(tree.tokens, s.words)], float))
    secs = time.perf_counter() - t0
    conf, ok = np.concatenate(confs), np.concatenate(oks)
    e, rows = ece(conf, ok)
    print(f"{args.model} dev, greedy default budget, tagger {args.tagger}: {len(sents)} "
          f"sentences, {len(conf)} words in {secs:.0f} s")
    print(f"UAS {100 * ok.mean():.2f}, mean confidence {conf.mean():.3f}, ECE {e:.4f}, "
          f"share at 1.0 {(conf == 1.0).mean():.3f}")
    print("| confidence | words | mean confidence | head accuracy |\n|---|---|---|---|")
    for lo, hi, n, c, a in rows:
        print(f"| {lo:.1f}-{hi:.1f} | {n} | {c:.3f} | {a:.3f} |")
    out = {"tagger": args.tagger, "ece": round(e, 4), "words": len(conf),
           "uas": round(100 * ok.mean(), 2), "share_at_1": round(float((conf == 1.0).mean()), 3)}
    if args.fit:
        fit = set(np.random.default_rng(FIT_SEED).choice(len(sents), FIT_SENTENCES,
                                                          replace=False).tolist())
        for name, idx in (("fit", sorted(fit)),
                          ("rest", [i for i in range(len(sents)) if i not in fit])):
            out[f"ece_{name}"] = round(ece(np.concatenate([confs[i] for i in idx]),
                                           np.concatenate([oks[i] for i in idx]))[0], 4)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
