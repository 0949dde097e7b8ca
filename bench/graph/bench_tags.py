"""Benchmarks of the graph parser with predicted tags, on en_ewt dev (gold tokens).

  tags      UAS/LAS with gold vs predicted tags (jackknifed vs gold-tag training)
  retag     UAS/LAS and tokens/s of every decoder with predicted tags, with and without
            re-tagging by the parser (Pipeline.choose_tags)
  neural    UAS/LAS and tokens/s of every graph decoder with gold vs predicted tags
            (`--tagger`, default accurate), over weights of the neural arc scores
            (budget `neural`): the tag gap with the tag-free arc model, and its curve (PNG)

The former `arccost` (the arc scorer's cost against the accurate tagger's) is gone: one
neural analyser now gives the accurate tags and the arc scores in one pass
(`models/serve/parse_policy.py`). Figures are printed as Markdown and written as JSON beside
this file; run one benchmark at a time on a quiet machine. Not a test.
"""
from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import time
from pathlib import Path

from dev_data import DEV, HERE, SHIPPED_GRAPH, load_dev, machine, parse_dev

from models.graph.model import GraphModel
from models.serve.pipeline import Pipeline


def cmd_tags(args) -> dict:
    """UAS/LAS with gold tags vs the model's own predicted tags, for each graph model
    in --graphs (the en_ewt front-end tags them): the jackknifing benchmark."""
    pipe = Pipeline.load("en_ewt")
    sents = load_dev(args.dev, args.limit)
    out = {}
    for path in args.graphs:
        pipe.c.graph = GraphModel.load(path)
        for gold in (True, False):
            report, _ = parse_dev(pipe, sents, "greedy", {}, gold, args.tagger)
            key = f"{path} {'gold' if gold else 'predicted'} tags"
            out[key] = {"UAS": round(100.0 * report.uas, 2),
                        "LAS": round(100.0 * report.las, 2)}
            print(f"| {path} | {'gold' if gold else 'predicted'} | {out[key]['UAS']:.2f} | "
                  f"{out[key]['LAS']:.2f} |", flush=True)
    return out


def cmd_retag(args) -> dict:
    """UAS/LAS and tokens/s (process time, tagging included) of every decoder with the
    model's predicted tags, without and with re-tagging by the parser
    (`Pipeline.choose_tags`), from gold tokens."""
    pipe = Pipeline.load("en_ewt")
    default = pipe.tagging.flips
    sents = load_dev(args.dev, args.limit)
    for s in sents[:20]:                       # JIT warm-up of every decoder
        for dec in pipe.decoders():
            pipe.parse_words([w.form for w in s.words], dec, {}, tagger=args.tagger)
    out = {}
    print("| decoder | re-tagging | UAS | LAS | tokens/s |\n|---|---|---|---|---|")
    for dec in pipe.decoders():
        for flips in (0, default.flips):
            pipe.tagging.flips = dataclasses.replace(default, flips=flips, decoders=(dec,))
            tok = correct = lcorrect = 0
            t0 = time.process_time()
            for s in sents:
                tree = pipe.parse_words([w.form for w in s.words], dec, {}, tagger=args.tagger)
                for w, t in zip(s.words, tree.tokens):
                    tok += 1
                    correct += w.head == t.head
                    lcorrect += w.head == t.head and w.deprel == t.deprel
            tps = tok / (time.process_time() - t0)
            key = f"{dec} flips {flips}"
            out[key] = {"UAS": round(100 * correct / tok, 2),
                        "LAS": round(100 * lcorrect / tok, 2), "tokens_per_s": round(tps)}
            print(f"| {dec} | {'on' if flips else 'off'} | {out[key]['UAS']:.2f} | "
                  f"{out[key]['LAS']:.2f} | {tps:,.0f} |", flush=True)
    return out


def cmd_neural(args) -> dict:
    """Per graph decoder and weight of the neural arc scores (`models/serve/parse_policy.py`):
    UAS/LAS with gold tags and with the --tagger's (re-tagging as the pipeline does),
    and tokens/s (process time, tagging and arc scoring included)."""
    pipe = Pipeline.load("en_ewt")
    if args.graphs != [SHIPPED_GRAPH]:         # another graph model with the same front-end
        pipe.c.graph = GraphModel.load(args.graphs[0])
    sents = load_dev(args.dev, args.limit)
    decoders = [d for d in pipe.decoders() if d in args.decoders]
    for s in sents[:20]:                       # JIT warm-up of every decoder
        for dec in decoders:
            pipe.parse_conllu(copy.deepcopy(s), dec, {"neural": 0.5}, tagger=args.tagger)
    rows = []
    print("| decoder | neural | gold UAS | gold LAS | predicted UAS | predicted LAS | gap "
          "| tokens/s (predicted) |\n|---|---|---|---|---|---|---|---|")
    for dec in decoders:
        for w in args.weights:
            row = {"decoder": dec, "neural": w}
            for gold in (True, False):
                report, seconds = parse_dev(pipe, sents, dec, {"neural": w}, gold, args.tagger)
                kind = "gold" if gold else "predicted"
                row[f"{kind}_UAS"] = round(100.0 * report.uas, 2)
                row[f"{kind}_LAS"] = round(100.0 * report.las, 2)
                row[f"{kind}_tokens_per_s"] = round(report.words / seconds)
            row["gap"] = round(row["gold_UAS"] - row["predicted_UAS"], 2)
            rows.append(row)
            print(f"| {dec} | {w:g} | {row['gold_UAS']:.2f} | {row['gold_LAS']:.2f} | "
                  f"{row['predicted_UAS']:.2f} | {row['predicted_LAS']:.2f} | {row['gap']:.2f} "
                  f"| {row['predicted_tokens_per_s']:,} |", flush=True)
    if args.graphs == [SHIPPED_GRAPH] and args.tagger == "accurate":
        plot_neural(rows, HERE / "neural_curve.png")
    return {"rows": rows, "arc_weight": pipe.arc_weight, "model_version": pipe.version,
            "graph": args.graphs[0]}


def plot_neural(rows, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for i, dec in enumerate(dict.fromkeys(r["decoder"] for r in rows)):
        rs = [r for r in rows if r["decoder"] == dec]
        color = f"C{i}"
        ax.plot([r["neural"] for r in rs], [r["gold_UAS"] for r in rs], "o--", color=color,
                label=f"{dec}, gold tags")
        ax.plot([r["neural"] for r in rs], [r["predicted_UAS"] for r in rs], "s-", color=color,
                label=f"{dec}, predicted tags")
    ax.set_xlabel("weight of the neural arc scores (budget `neural`)")
    ax.set_ylabel("UAS, en_ewt dev")
    ax.set_title("Tag-free neural arc scores close the gold/predicted tag gap")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=("tags", "retag", "neural"))
    p.add_argument("--graphs", nargs="+", default=[SHIPPED_GRAPH],
                   help="tags: graph model directories to compare; neural: the graph model "
                        "(results_neural_<its directory name>.json unless the shipped one)")
    p.add_argument("--dev", type=Path, default=DEV)
    p.add_argument("--limit", type=int, default=None, help="random subset of dev sentences")
    p.add_argument("--tagger", choices=("fast", "accurate"),
                   help="tags, retag (default fast; results_*_accurate.json), neural (default "
                        "accurate; results_neural_fast.json): the front-end tagger")
    p.add_argument("--weights", type=float, nargs="+", default=[0, 0.15, 0.3, 0.5, 0.75, 1.0],
                   help="neural: weights of the neural arc scores")
    p.add_argument("--decoders", nargs="+", default=["greedy", "mst", "sampling", "bgi"],
                   help="neural: graph decoders to run")
    args = p.parse_args()
    args.tagger = args.tagger or ("accurate" if args.what == "neural" else "fast")
    t0 = time.time()
    res = {"tags": cmd_tags, "retag": cmd_retag, "neural": cmd_neural}[args.what](args)
    res["machine"] = machine()
    res["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    res["wall_seconds"] = round(time.time() - t0, 1)
    res["tagger"] = args.tagger
    suffix = "" if args.tagger == "fast" else f"_{args.tagger}"
    if args.what == "neural":
        suffix = "" if args.tagger == "accurate" else f"_{args.tagger}"
        if args.graphs != [SHIPPED_GRAPH]:
            suffix += f"_{Path(args.graphs[0]).name}"
    (HERE / f"results_{args.what}{suffix}.json").write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
