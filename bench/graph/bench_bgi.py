"""Benchmark of the `bgi` decoder on an en_ewt dev subset (gold tokens and tags):
paper Table 1 (Tchernowitz et al. 2016) on our third-order model.

  table  UAS, tokens/s and shared arcs with greedy for greedy, mst, BGI-PP, +i
         (swaps), +i+b (beam), +ensemble with greedy, the selectional-branching
         transition parser alone and as the ensemble's other parser; all in one run
  tune   UAS of BGI-PP (+i) over a grid of alpha, beta (and swaps, beam)
  ensemble  UAS of the ensemble with selectional over a grid of gamma (UAS only)

Decoding time only: every decoder gets the same prebuilt Scorer (the arc
scores are shared work). Not a test; run on a quiet machine.

  python -m bench.graph.bench_bgi table --limit 300
"""
from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

from models.decoder_registry import GRAPH_DECODERS as DECODERS
from models.graph.decode_bgi import run_bgi
from models.graph.decoders import Decoded
from models.serve.pipeline import Pipeline

from .dev_data import DEV, encoded, load_dev, machine


def transition_heads(pipe, sent) -> list[int]:
    """The selectional-branching parser's tree (its default beam), gold tags."""
    from models import transition as transition_model

    w = sent.words
    heads, _, _, _ = transition_model.decode(
        pipe.transition, [x.form for x in w], [x.lemma for x in w], [x.upos for x in w],
        [x.xpos for x in w], {})
    return [int(h) for h in heads]


def run(model, data, scorers, decoder, budget, ref=None, pipe=None):
    """(uas, tokens/s, shared-arc fraction with ref heads, heads list, mean score).
    `selectional` (alone or as the ensemble's other parser) runs the transition
    parser of `pipe`, inside the timed region."""
    tok = correct = shared = 0
    heads_all, scores = [], []
    t0 = time.perf_counter()
    if decoder == "selectional":
        outs = []
        for (s, _), sc in zip(data, scorers):
            h = np.array([-1] + transition_heads(pipe, s))
            outs.append(Decoded(h, sc.score(h), {}))
    elif budget.get("ensemble_with") == "selectional":
        outs = [DECODERS[decoder](sc, budget, ensemble_heads=transition_heads(pipe, s))
                for (s, _), sc in zip(data, scorers)]
    else:
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
    ap.add_argument("what", choices=("table", "tune", "ensemble"))
    ap.add_argument("--offset", type=int, default=0, help="skip this many dev sentences")
    ap.add_argument("--alphas", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    ap.add_argument("--betas", type=float, nargs="+", default=[0.0, 0.1, 0.3, 0.6])
    ap.add_argument("--min-part-probs", type=float, nargs="+", default=[0.0, 0.01])
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--swaps", type=int, default=20)
    ap.add_argument("--beam", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    pipe = Pipeline.load("en_ewt")
    model = pipe.graph
    data = encoded(load_dev(DEV, args.offset + args.limit)[args.offset:], model)
    scorers = [model.scorer(enc) for _, enc in data]
    ntok = sum(len(s.words) for s, _ in data)
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {machine()}; "
          f"{len(data)} dev sentences, {ntok} tokens")
    run(model, data[:5], scorers[:5], "bgi", {"beam": 2, "swaps": 1})  # JIT warm-up
    run(model, data[:5], scorers[:5], "greedy", {})
    run(model, data[:5], scorers[:5], "selectional", {}, pipe=pipe)
    if args.what == "ensemble":
        others = [np.array([-1] + transition_heads(pipe, s)) for s, _ in data]
        greedy = [DECODERS["greedy"](sc, {}).heads for sc in scorers]
        golds = [np.array([-1] + [w.head for w in s.words]) for s, _ in data]

        def uas(hs):
            return 100 * sum(int((h[1:] == g[1:]).sum()) for h, g in zip(hs, golds)) / ntok

        print(f"greedy {uas(greedy):.2f}, selectional {uas(others):.2f}")
        print("| gamma_1 | gamma_2/gamma_1 | UAS ensemble | sentences differing from greedy |")
        print("|---|---|---|---|")
        for g1, ratio in itertools.product((0.05, 0.1, 0.2, 0.3, 0.5, 1.0), (0.5, 0.0)):
            gamma = (g1, g1 * ratio, g1 * ratio * ratio)
            hs = [run_bgi(sc, 1, args.swaps, 2.0, 0.3, o, gamma=gamma)[0]
                  for sc, o in zip(scorers, others)]
            diff = sum(int((h != g).any()) for h, g in zip(hs, greedy))
            print(f"| {g1} | {ratio} | {uas(hs):.2f} | {diff} |", flush=True)
        return
    if args.what == "tune":
        print("| alpha | beta | min part prob | swaps | UAS | tokens/s | mean score |")
        print("|---|---|---|---|---|---|---|")
        for mp, alpha, beta, swaps in itertools.product(
                args.min_part_probs, args.alphas, args.betas, (0, args.swaps)):
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
               ("BGI-PP", "bgi", {"swaps": 0, "beam": 1, "start": "bgi"}),
               (f"BGI-PP+i (swaps {args.swaps})", "bgi",
                {"swaps": args.swaps, "beam": 1, "start": "bgi"}),
               (f"BGI-PP+i+b (beam {args.beam})", "bgi",
                {"swaps": args.swaps, "beam": args.beam, "start": "bgi"}),
               ("BGI-PP+i, start max", "bgi", {"swaps": args.swaps, "beam": 1, "start": "max"}),
               (f"BGI-PP+i+b (beam {args.beam}), start max", "bgi",
                {"swaps": args.swaps, "beam": args.beam, "start": "max"}),
               ("BGI-PP+i, start both (default)", "bgi", {"swaps": args.swaps, "beam": 1}),
               (f"BGI-PP+i+b (beam {args.beam}), start both", "bgi",
                {"swaps": args.swaps, "beam": args.beam}),
               ("BGI-PP+i+e (ensemble with greedy)", "bgi",
                {"swaps": args.swaps, "beam": 1, "ensemble_with": "greedy"}),
               ("selectional (transition, default beam)", "selectional", {}),
               ("BGI-PP+i+e (ensemble with selectional)", "bgi",
                {"swaps": args.swaps, "beam": 1, "ensemble_with": "selectional"})]
    # the decoders take turns in every repetition; speed ratios are per repetition
    tps = {name: [] for name, _, _ in configs}
    res = {}
    g_heads = None
    for rep in range(args.repeat):
        for name, dec, budget in configs:
            uas, t, sh, heads, ms = run(model, data, scorers, dec, budget, g_heads, pipe)
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
