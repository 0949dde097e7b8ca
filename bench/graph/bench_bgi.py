"""Benchmark of the `bgi` decoder on an en_ewt dev subset (gold tokens and tags):
paper Table 1 (Tchernowitz et al. 2016) on our third-order model.

  table  UAS, tokens/s and shared arcs with greedy for greedy, mst, BGI-PP, +i
         (swaps), +i+b (beam), +ensemble with greedy; all in one run
  tune   UAS of BGI-PP (+i) over a grid of alpha, beta (and swaps, beam)

Decoding time only: every decoder gets the same prebuilt Scorer (the arc
scores are shared work). Not a test; run on a quiet machine.

  python -m bench.graph.bench_bgi table --limit 300
"""
from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

from models.graph.decode_bgi import run_bgi
from models.graph.decoders import DECODERS
from models.pipeline import Pipeline

from .bench_graph import DEV, encoded, load_dev, machine


def run(model, data, scorers, decoder, budget, ref=None):
    """(uas, tokens/s, shared-arc fraction with ref heads, heads list, mean score)."""
    tok = correct = shared = 0
    heads_all, scores = [], []
    t0 = time.perf_counter()
    outs = [DECODERS[decoder](sc, dict(budget)) for sc in scorers]
    secs = time.perf_counter() - t0
    for k, ((sent, _), dec) in enumerate(zip(data, outs)):
        gold = np.array([-1] + [w.head for w in sent.words])
        tok += len(sent.words)
        correct += int((dec.heads[1:] == gold[1:]).sum())
        if ref is not None:
            shared += int((dec.heads[1:] == ref[k][1:]).sum())
        heads_all.append(dec.heads)
        scores.append(dec.score)
    fin = [x for x in scores if np.isfinite(x)]  # -inf: a tree with a pruned arc
    return correct / tok, tok / secs, shared / tok if ref is not None else 1.0, heads_all, \
        float(np.mean(fin)) if fin else float("-inf")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("table", "tune"))
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--swaps", type=int, default=20)
    ap.add_argument("--beam", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    model = Pipeline.load("en_ewt").graph
    data = encoded(load_dev(DEV, args.limit))
    scorers = [model.scorer(enc) for _, enc in data]
    ntok = sum(len(s.words) for s, _ in data)
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {machine()}; "
          f"{len(data)} dev sentences, {ntok} tokens")
    run(model, data[:5], scorers[:5], "bgi", {"beam": 2, "swaps": 1})  # JIT warm-up
    run(model, data[:5], scorers[:5], "greedy", {})
    if args.what == "tune":
        print("| alpha | beta | min part prob | swaps | UAS | tokens/s | mean score |")
        print("|---|---|---|---|---|---|---|")
        for mp, alpha, beta, swaps in itertools.product(
                (0.0, 0.01), (0.5, 1.0, 2.0), (0.0, 0.1, 0.3, 0.6), (0, args.swaps)):
            tok = correct = 0
            scores = []
            t0 = time.perf_counter()
            outs = [run_bgi(sc, 1, swaps, alpha, beta, min_part_prob=mp) for sc in scorers]
            secs = time.perf_counter() - t0
            for (sent, _), (heads, score, _) in zip(data, outs):
                gold = np.array([-1] + [w.head for w in sent.words])
                tok += len(sent.words)
                correct += int((heads[1:] == gold[1:]).sum())
                scores.append(score)
            print(f"| {alpha} | {beta} | {mp} | {swaps} | {100 * correct / tok:.2f} "
                  f"| {tok / secs:,.0f} | {np.mean(scores):.2f} |", flush=True)
        return
    configs = [("greedy (defaults)", "greedy", {}),
               ("mst (first order)", "mst", {}),
               ("BGI-PP", "bgi", {"swaps": 0, "beam": 1}),
               (f"BGI-PP+i (swaps {args.swaps})", "bgi", {"swaps": args.swaps, "beam": 1}),
               (f"BGI-PP+i+b (beam {args.beam})", "bgi",
                {"swaps": args.swaps, "beam": args.beam}),
               ("BGI-PP+i+e (ensemble with greedy)", "bgi",
                {"swaps": args.swaps, "beam": 1, "ensemble_with": "greedy"})]
    # the decoders take turns in every repetition; speed ratios are per repetition
    tps = {name: [] for name, _, _ in configs}
    res = {}
    g_heads = None
    for rep in range(args.repeat):
        for name, dec, budget in configs:
            uas, t, sh, heads, ms = run(model, data, scorers, dec, budget, g_heads)
            if g_heads is None:
                g_heads = heads
            tps[name].append(t)
            res[name] = (uas, sh, ms)
        print(f"repetition {rep + 1}: " + ", ".join(f"{n.split(' (')[0]} {tps[n][-1]:,.0f}"
                                                     for n, _, _ in configs), flush=True)
    g = np.array(tps["greedy (defaults)"])
    print("| decoder | UAS | tokens/s (median) | speed vs greedy (median of runs) "
          "| shared arcs with greedy | mean model score |")
    print("|---|---|---|---|---|---|")
    for name, _, _ in configs:
        uas, sh, ms = res[name]
        ratio = float(np.median(np.array(tps[name]) / g))
        print(f"| {name} | {100 * uas:.2f} | {np.median(tps[name]):,.0f} | {ratio:.2f}x "
              f"| {100 * sh:.1f}% | {ms:.2f} |")


if __name__ == "__main__":
    main()
